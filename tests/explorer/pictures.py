#!/usr/bin/env python3
"""The pictures of docs/explorer.md, taken in Chromium from trained models — the quick start's dates model, the dates
Transformer of docs/results.md (attend's defaults) and chapter 13's digits captioner — each after the
page's output text is checked (the right date, the right digits):

    tests/explorer/pictures.py ATTEND OUT_DIR [MODELS_DIR]

ATTEND is the program (build/apps/attend), OUT_DIR where the pictures go (docs/figures/explorer to regenerate the
docs'), MODELS_DIR where the models are kept (default build/explorer-pictures): a model already there is used as it
is, one missing is trained by its command below (about 8 minutes for the three on 2 cores of an AMD EPYC, Zen 4).
Needs Chromium, chromium-driver and python3-selenium, and the digits data (attend data fetch): without them it exits
77 saying what is missing. A model that writes a wrong output is not pictured (the others are) and the script exits 1
naming it. The browser test (explorer_test.py) checks the page itself with its own small models; this only takes the
pictures."""
import os
import subprocess
import sys

import explorer_test as t

# The commands the models come from: the quick start's (scripts/run), the Transformer's of docs/results.md (its
# defaults: D = 128, 4 heads), chapter 13's.
MODELS = {
    "dates": ["--task", "dates", "--epochs", "2"],
    "dates-transformer": ["--task", "dates", "--arch", "transformer", "--epochs", "6"],
    "digits": ["--task", "digits", "--data", "digits"],
}
DATE, EXPECTED = "Saturday 09 May 2018", "2018-05-09"


def trained(attend, folder):
    os.makedirs(folder, exist_ok=True)
    paths = []
    for name, flags in MODELS.items():
        path = os.path.join(folder, name + ".safetensors")
        if not os.path.exists(path):
            print(f"pictures: training {name}: attend train {' '.join(flags)}", flush=True)
            # --force: what a stopped run left beside it (NAME.last.safetensors) is replaced
            if subprocess.run([attend, "train", *flags, "--out", path, "--force"], stdout=subprocess.DEVNULL).returncode:
                sys.exit(f"pictures: training {name} failed (its error above)")
        paths.append(path)
    return paths


def output_is(page, expected, what):
    shown = page.by_id("output").text
    if not t.check(shown == expected, f"{what}: the page shows {shown!r}, not {expected!r}"):
        raise RuntimeError(f"{what}: not pictured")


def dates(page):
    page.ask("dates", DATE, beam=3)
    output_is(page, EXPECTED, "dates")
    page.tab("heatmap")
    page.css('#heatmap td.cell[data-q="5"][data-k="14"]')[0].click()  # the month's first digit, over "May"
    page.shot("dates-heatmap-equation")
    page.tab("attribution")
    page.wait(lambda: page.by_id("attribution-tables").is_displayed())
    page.choose("attribution-method", 1)
    page.css('#attribution-table td.cell[data-q="5"][data-k="14"]')[0].click()
    page.shot("dates-attribution")
    page.tab("precision")
    page.wait(lambda: page.css("#precision-table tbody tr"))
    if "int8" in [o.get_attribute("value") for o in page.css("#precision option")]:
        page.choose("precision", "int8")
    page.shot("dates-precisions")
    page.tab("beam")
    page.shot("dates-beam")


def transformer(page):
    page.ask("dates-transformer", DATE)
    output_is(page, EXPECTED, "transformer")
    page.choose("kind", 0)
    page.choose("layer", 1)
    page.choose("head", "mean")
    page.tab("head")
    page.shot("transformer-head")
    page.tab("model")
    page.shot("transformer-model")


def digits(page):
    example = t.choose_example(page, "digits", 1)
    output_is(page, example["references"][0], "digits")
    page.tab("image")
    page.shot("digits-image")


def main(attend, out, models_dir="build/explorer-pictures"):
    t.need_browsers()
    t.digits_data(attend)
    os.makedirs(out, exist_ok=True)
    server, address = t.start_server(attend, trained(attend, models_dir))
    t.browser_now = "chromium"
    page = t.Page(address, out, "chromium")
    try:
        for picture in (dates, transformer, digits):
            try:
                picture(page)
            except RuntimeError as e:
                print("pictures:", e)
    finally:
        page.driver.quit()
        server.terminate()
        server.wait(timeout=30)
    print(f"pictures: {len(t.failures)} failures; pictures in {out}")
    return 1 if t.failures else 0


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
