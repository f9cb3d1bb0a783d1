// A small well-formedness checker for the SVG files the project writes (the heatmap tests and the cli tests use it),
// itself tested on broken samples in test_svg.cpp. Not a validating parser: it knows exactly what attention_svg writes.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstring>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace attend::testing {

// The code point at xml[pos] and its byte count, or {-1, 1} for a byte that starts no valid shortest-form UTF-8
// sequence.
inline std::pair<long, std::size_t> decode_utf8(const std::string& xml, std::size_t pos) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(xml[pos + k]); };
  const unsigned char lead = byte(0);
  if (lead < 0x80) return {lead, 1};
  const std::size_t length = lead >= 0xF0 && lead <= 0xF4  ? 4
                             : lead >= 0xE0 && lead < 0xF0 ? 3
                             : lead >= 0xC2 && lead < 0xE0 ? 2
                                                           : 0;
  if (length == 0 || pos + length > xml.size()) return {-1, 1};
  long code = lead & (0x7F >> length);
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(k) & 0xC0) != 0x80) return {-1, 1};
    code = (code << 6) | (byte(k) & 0x3F);
  }
  const long smallest = length == 2 ? 0x80 : length == 3 ? 0x800 : 0x10000;
  if (code < smallest || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return {-1, 1};
  return {code, length};
}

// The first byte of `xml` that is not valid UTF-8 of a character XML 1.0 allows, as a message; "" when there is none.
inline std::string xml_character_problem(const std::string& xml) {
  for (std::size_t pos = 0; pos < xml.size();) {
    const auto [code, length] = decode_utf8(xml, pos);
    const bool allowed = code == 0x9 || code == 0xA || code == 0xD || (code >= 0x20 && code <= 0xD7FF) ||
                         (code >= 0xE000 && code <= 0xFFFD) || code >= 0x10000;
    if (!allowed) return "invalid UTF-8 or a character XML forbids at byte " + std::to_string(pos);
    pos += length;
  }
  return "";
}

// At a '&' (xml[pos]): whether an entity or character reference follows; if so, moves pos past it.
inline bool skip_reference(const std::string& xml, std::size_t& pos) {
  const std::size_t semicolon = xml.find(';', pos);
  if (semicolon == std::string::npos) return false;
  const std::string body = xml.substr(pos + 1, semicolon - pos - 1);
  const auto digits = [](const std::string& s, bool hex) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [hex](char c) {
      const auto u = static_cast<unsigned char>(c);
      return hex ? std::isxdigit(u) != 0 : std::isdigit(u) != 0;
    });
  };
  const bool ok = body == "amp" || body == "lt" || body == "gt" || body == "quot" || body == "apos" ||
                  (body.size() > 1 && body[0] == '#' && digits(body.substr(1), false)) ||
                  (body.size() > 2 && body[0] == '#' && body[1] == 'x' && digits(body.substr(2), true));
  if (ok) pos = semicolon + 1;
  return ok;
}

// Why `xml` is not well-formed XML, or "" when it is: valid UTF-8 of characters XML 1.0 allows, one root element, every
// tag closed in proper nesting or self-closed, attribute values quoted and attribute names unique per element, '&' only
// as an entity or character reference, no '<' in text or in attribute values. An XML declaration and comments are
// skipped; DOCTYPE and CDATA are not supported (attention_svg writes neither).
inline std::string xml_problem(const std::string& xml) {
  if (const std::string bad = xml_character_problem(xml); !bad.empty()) return bad;
  std::size_t pos = 0;
  const auto at = [&](const char* text) { return xml.compare(pos, std::strlen(text), text) == 0; };
  const auto problem = [&](const std::string& what) { return what + " at byte " + std::to_string(pos); };
  const auto skip_space = [&] {
    const std::size_t start = pos;
    while (pos < xml.size() && std::isspace(static_cast<unsigned char>(xml[pos]))) ++pos;
    return pos > start;
  };
  const auto read_name = [&] {
    const std::size_t start = pos;
    const auto name_char = [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':' || c == '-' || c == '.';
    };
    if (pos < xml.size() &&
        (std::isalpha(static_cast<unsigned char>(xml[pos])) || xml[pos] == '_' || xml[pos] == ':')) {
      while (pos < xml.size() && name_char(xml[pos])) ++pos;
    }
    return xml.substr(start, pos - start);
  };
  const auto reference = [&] { return skip_reference(xml, pos); };

  std::vector<std::string> open;  // the elements open at pos, outermost first
  bool root_seen = false;
  if (at("<?xml")) {
    const std::size_t end = xml.find("?>");
    if (end == std::string::npos) return problem("unterminated XML declaration");
    pos = end + 2;
  }
  while (pos < xml.size()) {
    if (at("<!--")) {
      const std::size_t end = xml.find("-->", pos + 4);
      if (end == std::string::npos) return problem("unterminated comment");
      pos = end + 3;
    } else if (at("</")) {
      pos += 2;
      const std::string name = read_name();
      skip_space();
      if (!at(">")) return problem("unterminated end tag </" + name);
      if (open.empty() || open.back() != name) {
        return problem("</" + name + "> closes " + (open.empty() ? std::string("nothing") : "<" + open.back() + ">"));
      }
      open.pop_back();
      ++pos;
    } else if (at("<")) {
      ++pos;
      const std::string name = read_name();
      if (name.empty()) return problem("a '<' that starts no tag");
      if (open.empty() && root_seen) return problem("a second root element <" + name + ">");
      root_seen = true;
      std::set<std::string> attributes;
      for (;;) {
        const bool spaced = skip_space();
        if (at("/>")) {
          pos += 2;
          break;
        }
        if (at(">")) {
          ++pos;
          open.push_back(name);
          break;
        }
        if (!spaced) return problem("no space before an attribute of <" + name + ">");
        const std::string attribute = read_name();
        if (attribute.empty()) return problem("a malformed attribute in <" + name + ">");
        if (!attributes.insert(attribute).second) return problem("attribute " + attribute + " repeated");
        skip_space();
        if (!at("=")) return problem("attribute " + attribute + " without '='");
        ++pos;
        skip_space();
        if (pos >= xml.size() || (xml[pos] != '"' && xml[pos] != '\''))
          return problem(attribute + "'s value is unquoted");
        const char quote = xml[pos++];
        while (pos < xml.size() && xml[pos] != quote) {
          if (xml[pos] == '<') return problem("a '<' in " + attribute + "'s value");
          if (xml[pos] != '&') {
            ++pos;
          } else if (!reference()) {
            return problem("a raw '&' in " + attribute + "'s value");
          }
        }
        if (pos >= xml.size()) return problem(attribute + "'s value is unterminated");
        ++pos;
      }
    } else if (xml[pos] == '&') {
      if (!reference()) return problem("a raw '&' in text");
    } else {
      if (open.empty() && !std::isspace(static_cast<unsigned char>(xml[pos]))) return problem("text outside the root");
      ++pos;
    }
  }
  if (!open.empty()) return "<" + open.back() + "> is never closed";
  if (!root_seen) return "no root element";
  return "";
}

}  // namespace attend::testing
