"""pytest-html's report: what the agent wrote is escaped, masked and never markup."""

from __future__ import annotations

import pytest

BOT = '''\
def reply(turn):
    return {"output": "<script>alert(1)</script> 请拨打 13912345678 \\x1b[2J "
                      "身份证110101199003077777"}
'''


def test_the_html_report_escapes_and_masks_what_the_agent_and_the_case_wrote(
        pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nagenteval_paths = cases\n"
                     "addopts = -p no:benchmark --agenteval-workers=asked\n")
    pytester.path.joinpath("agenteval.yaml").write_text(
        "target: {adapter: python, callable: 'bot:reply'}\n", encoding="utf-8")
    pytester.path.joinpath("bot.py").write_text(BOT, encoding="utf-8")
    pytester.mkdir("cases").joinpath("a.yaml").write_text(
        'cases:\n  - id: X-1\n    title: "<img src=x onerror=alert(2)> 13800000000"\n'
        "    request: {input: 你好}\n"
        "    rules: [{type: keyword_match, params: {none: [script]}}]\n", encoding="utf-8")
    result = pytester.runpytest("cases", "--html=r.html", "--self-contained-html")
    result.assert_outcomes(failed=1)
    html = (pytester.path / "r.html").read_text(encoding="utf-8")
    assert "alert(1)" in html and "onerror=alert(2)" in html  # the text is there…
    for markup in ("<script>alert", "<img src=x"):  # …never as markup
        assert markup not in html
    for raw in ("13912345678", "110101199003077777", "13800000000"):
        assert raw not in html
    assert "139****5678" in html and "138****0000" in html
    assert "\x1b" not in html  # the ESC of the reply is shown escaped
