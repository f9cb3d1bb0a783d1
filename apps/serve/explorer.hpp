// attend serve's attention explorer: the page (apps/serve/explorer/: index.html, explorer.css, explorer.js), compiled
// into the program by scripts/embed_files.py and served at /, /explorer.css and /explorer.js (docs/explorer.md).
#pragma once

#include <string_view>

namespace attend::app::serve {

struct EmbeddedFile {
  std::string_view path;  // where it is served: "/", "/index.html", "/explorer.js", …
  const char* content_type;
  std::string_view body;
};

// The explorer's file served at `path`, or nullptr.
const EmbeddedFile* explorer_file(std::string_view path);

}  // namespace attend::app::serve
