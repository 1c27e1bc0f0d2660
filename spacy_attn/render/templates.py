"""The markup and the stylesheet of spacy-attn's pictures (``str.format`` templates)."""

CSS = """
.spacy-attn { font-family: -apple-system, BlinkMacSystemFont, 'Segoe UI', Helvetica, Arial, \
sans-serif; font-size: 16px; line-height: 1.5; color: #222; max-width: 72em; }
.spacy-attn h2 { font-size: 1.3em; margin: 0.6em 0 0.4em 0; }
.spacy-attn .attn-doc { margin: 0 0 2em 0; padding: 0.6em 0 0 0; border-top: 1px solid #ddd; }
.spacy-attn table { border-collapse: collapse; margin: 0 0 0.8em 0; }
.spacy-attn p { margin: 0.3em 0; }
.spacy-attn q { font-style: italic; }
.spacy-attn .attn-label { vertical-align: top; text-align: right; padding: 0.3em 0.8em 0.3em 0; \
white-space: nowrap; font-weight: normal; color: #555; }
.spacy-attn .attn-text { padding: 0.3em 0; line-height: 2; font-size: 1.05em; }
.spacy-attn .attn-token { padding: 0.15em 0.04em; border-radius: 0.2em; }
.spacy-attn .attn-dark { color: #fff; }
.spacy-attn .attn-answer-token { outline: 2px solid #1f4e9c; }
.spacy-attn .attn-col { writing-mode: vertical-rl; transform: rotate(180deg); \
font-weight: normal; padding: 0.3em 0; vertical-align: bottom; text-align: left; \
white-space: nowrap; }
.spacy-attn .attn-rowhead { text-align: right; font-weight: normal; padding: 0 0.6em; \
white-space: nowrap; }
.spacy-attn .attn-cell { width: 3em; min-width: 3em; height: 2.2em; border: 1px solid #e4e4e4; \
padding: 0; text-align: center; font-size: 0.8em; color: #333; }
.spacy-attn .attn-cell.attn-dark { color: #fff; }
.spacy-attn .attn-axis-title { font-weight: normal; color: #555; font-size: 0.9em; }
.spacy-attn .attn-corner { font-weight: normal; color: #555; font-size: 0.8em; \
vertical-align: bottom; text-align: right; padding: 0 0.6em 0.3em 0; }
.spacy-attn .attn-note { color: #555; font-size: 0.9em; }
.spacy-attn .attn-legend { margin: 0.4em 0 0.8em 0; font-size: 0.9em; color: #444; }
.spacy-attn .attn-legend table { margin: 0.2em 0 0 0; }
.spacy-attn .attn-swatch { width: 2.2em; height: 1em; border: 1px solid #ccc; padding: 0; }
.spacy-attn .attn-tick { font-size: 0.85em; padding: 0; color: #444; }
.spacy-attn .attn-prediction { margin: 0.4em 0 0.8em 0; }
.spacy-attn .attn-probs th { text-align: left; font-weight: normal; padding: 0.1em 0.8em 0.1em 0; }
.spacy-attn .attn-probs td { padding: 0.1em 0.4em 0.1em 0; }
.spacy-attn .attn-probs .attn-top th, .spacy-attn .attn-probs .attn-top td { \
font-weight: bold; }
.spacy-attn .attn-bar { display: inline-block; height: 0.8em; background-color: #555; }
.spacy-attn .attn-bar-track { width: 10em; background-color: #eee; }
"""

# -- the fragment and the page ----------------------------------------------

TPL_FRAGMENT = '<div class="spacy-attn">\n<style>{css}</style>\n{heading}{body}\n</div>'
TPL_HEADING = "<h2>{title}</h2>\n"
TPL_DOC = '<div class="attn-doc">\n{content}\n</div>'
TPL_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8" />
<title>{title}</title>
</head>
<body style="margin: 1em 2em">
{content}
</body>
</html>
"""

# -- what every style shows ----------------------------------------------------

TPL_NOTE = '<p class="attn-note">{text}</p>'
TPL_LEGEND = (
    '<div class="attn-legend"><p class="attn-legend-text">{text}</p>'
    '<table class="attn-scale"><tr>{swatches}</tr><tr>{ticks}</tr>'
    "</table></div>"
)
TPL_SWATCH = (
    '<td class="attn-swatch" style="background-color: {color}" title="{value}"></td>'
)
TPL_TICKS = (
    '<td class="attn-tick" colspan="4" style="text-align: left">{low}</td>'
    '<td class="attn-tick" colspan="3" style="text-align: center">{middle}</td>'
    '<td class="attn-tick" colspan="4" style="text-align: right">{high}</td>'
)
# The best of a ranked list (labels or answers) and a bar per entry.
TPL_PREDICTION = (
    '<div class="attn-prediction"><p>{what}: '
    '<b class="attn-predicted">{best}</b>{detail}</p>'
    '<table class="attn-probs">{rows}</table></div>'
)
TPL_PROBABILITY = "<tr{top}><th>{label}</th><td>{bar}</td><td>{value}</td></tr>"
TPL_BAR = (
    '<span class="attn-bar-track attn-bar" style="background-color: #eee">'
    '<span class="attn-bar" style="width: {width:.2f}em"></span></span>'
)
TPL_HEATMAP_ROW = (
    '<tr class="attn-row {css_class}"><th class="attn-label">{label}</th>'
    '<td class="attn-text">{tokens}</td></tr>'
)
TPL_TOKEN = (
    '<span class="{classes}" style="background-color: {color}" '
    'title="{value}">{text}</span>{whitespace}'
)

# -- alignment -------------------------------------------------------------------

TPL_AXIS_ROWS = (
    '<p class="attn-axis attn-axis-rows"><b>Rows</b>: the first text (premise), '
    "<q>{text}</q></p>"
)
TPL_AXIS_COLUMNS = (
    '<p class="attn-axis attn-axis-cols"><b>Columns</b>: the second text '
    "(hypothesis), <q>{text}</q></p>"
)
TPL_COLUMNS_TITLE = (
    '<tr><th></th><th class="attn-axis-title" colspan="{span}" '
    'style="text-align: left">second text (hypothesis) \u2192</th></tr>'
)
TPL_COLUMN_HEADS = (
    '<tr><th class="attn-corner">first text (premise) \u2193</th>{heads}</tr>'
)
TPL_COLUMN_HEAD = '<th class="attn-col">{text}</th>'
TPL_CELL = (
    '<td class="{classes}" style="background-color: {color}" title="{tip}">{text}</td>'
)
TPL_MATRIX_ROW = (
    '<tr class="attn-row"><th class="attn-rowhead">{label}</th>{cells}</tr>'
)

# -- QA ------------------------------------------------------------------------

TPL_QUESTION = (
    '<p class="attn-axis attn-axis-question"><b>Question</b>: <q>{text}</q></p>'
)
