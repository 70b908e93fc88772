"""Unit tests of personal-data masking (pytest_agenteval/privacy.py)."""

from __future__ import annotations

import pytest

from pytest_agenteval.privacy import Masker

from factories import item, turn


@pytest.mark.parametrize("text, masked", [
    ("13800000000", "138****0000"),
    ("我的手机13812345678谢谢", "我的手机138****5678谢谢"),
    ("tel:19912345678.", "tel:199****5678."),
    ("138 1234 5678", "138****5678"),
    ("138-1234-5678", "138****5678"),
    ("１３８１２３４５６７８", "138****5678"),
    ("+86 13812345678", "+86 138****5678"),
    ("+86-138-1234-5678", "+86 138****5678"),
    ("+8613812345678", "+86 138****5678"),
    ("8613812345678", "+86 138****5678"),
    ("两个：13800000000，13911112222。", "两个：138****0000，139****2222。"),
])
def test_mobile_numbers_are_masked(text: str, masked: str) -> None:
    assert Masker().text(text) == masked


@pytest.mark.parametrize("text", [
    "12800000000",            # 12x is not a mobile prefix
    "1380000000",             # 10 digits
    "138000000001",           # 12 digits
    "订单1380000000012345678",  # 19-digit order number
    "12345678901234567890",   # 20 digits
    "0138-1234",              # short landline-like text
    "价格3.37万，里程12000公里",
])
def test_other_numbers_are_untouched(text: str) -> None:
    assert Masker().text(text) == text


@pytest.mark.parametrize("text, masked", [
    ("身份证11010519491231002X", "身份证110***********002X"),
    ("110105194912310021", "110***********0021"),
    ("id 11010519491231002x ok", "id 110***********002x ok"),
    ("１１０１０５１９４９１２３１００２１", "１１０***********００２１"),
])
def test_id_numbers_are_masked(text: str, masked: str) -> None:
    assert Masker().text(text) == masked


@pytest.mark.parametrize(("text", "masked"), [
    ("138 - 0013 - 8000", "138****8000"),
    ("138.0013.8000", "138****8000"),
    ("1 3 8 0 0 1 3 8 0 0 0", "138****8000"),
    ("(+86) 138 0013 8000", "+86 138****8000"),
    ("0086 138 0013 8000", "+86 138****8000"),
    ("一三七，二零四六，八八一五", "一三七****八八一五"),     # the commas an ASR puts in
    ("138零零13八000", "138****八000"),                      # Chinese digits mixed in
    ("电话 010-6234 5678", "电话 010****5678"),
    ("+852 9123 4567", "+852 ****4567"),
    ("(852) 9736 4021", "852 ****4021"),
    ("call +1 415-555-2671", "call +1 ****2671"),
    ("電話係 9387 2615", "電話係 ****2615"),                  # a phone word introduces it
    ("tel:+8613800138000", "tel:+86 138****8000"),
    ("wa.me/85261827394", "wa.me/852****7394"),
    ("110101 19900307 123X", "110***********123X"),          # not a phone inside an ID
    ("老身份证 420102850613217", "老身份证 420********3217"),    # an old 15-digit ID
    ("K/P 900512-14-5567", "K/P 900*****5567"),              # a Malaysian MyKad
    ("身份证三幺零幺零四幺九八七零九二零幺零二叉", "身份证三幺零***********幺零二叉"),
    ("P702846（A）", "P*******A）"),                          # a Hong Kong ID
    ("护照号：E12345678", "护照号：E******78"),
    ("Taiwan ID: F223456789", "Taiwan ID: F*******89"),     # labelled, its check letter off
    ("zhangsan＠qq.com", "z***＠qq.com"),
    ("zhangsan@qq。com", "z***@qq。com"),
    ("zhou.ba%40126.com", "z***%40126.com"),
    ("wang at qq dot com", "w*** at qq dot com"),
    ("li[at]163.com", "l***[at]163.com"),
    ("zhao#qq.com", "z***#qq.com"),
    ("王芳@公司.cn", "王***@公司.cn"),
])
def test_personal_data_as_people_write_it_is_masked(text: str, masked: str) -> None:
    assert Masker().text(text) == masked


@pytest.mark.parametrize("text", [
    "价格 13.58 14.28 15.98 万",           # a row of prices: no number starts and ends there
    "坐标 113.264385, 23.129112",          # a decimal's fraction is no number of its own
    "服务器 139.80.138.100 超时",            # an IP address has no phone's grouping
    "金额 1,380,013.00 元",
    "ISBN 0-306-40615-2",                  # the area code would be a group of its own
    "发票代码 044031900111",                 # a code word before it
    "ICCID：8986 0321 5123 4567 8905",
    "借据号 JJ-0815-138001",                 # a code's letters glued to it
    "保单号 PDAA202344030000012345",          # 18 digits glued to letters, no birth date
    "订单号码是 0755123456",                  # a code word wins over 号码
    '<img src="logo@2x.png">',
    "git clone git@github.com:org/repo.git",
    "npm i @vue/cli@5.0.8",
    "已脱敏：138****8000、l****n@163.com、110***********123X",
    "血压 138/88 126/80 142/90",
    "运单 353912870315420 已签收",          # 15 digits without a document word: no old ID
    "营业时间：0900-1200 / 1330-1800",        # no subscriber number starts with 1
    "区号 010 021 0755 020",
    "App 3.8.1+2024051201",                  # a + inside a token starts no number
    "跟进记录：电话 2024-05-12 14:30 已沟通",   # a date after a phone word
    "成绩 65 70 72 80 85 90",                 # a list after a country code's digits
    "通知@所有人。公司年会",
    "sign in at icloud dot com",
    "Order ID: F223456789",                  # an order's id, not a person's
    "User ID: A1234567",
])
def test_look_alikes_are_left_readable(text: str) -> None:
    assert Masker().text(text) == text


def test_id_number_is_not_masked_as_a_phone() -> None:
    # an 18-digit ID that starts like a mobile number is masked as an ID, in one piece
    assert Masker().text("13800000000123456X") == "138***********456X"


def test_full_width_id_with_full_width_x() -> None:
    assert "*" in Masker().text("１１０１０５１９４９１２３１００２Ｘ")


@pytest.mark.parametrize("text, masked", [
    ("邮箱 zhang.san@example.com", "邮箱 z***@example.com"),
    ("a+tag@mail.example.cn,", "a***@mail.example.cn,"),
    ("13800000000@163.com", "1***@163.com"),
])
def test_emails_are_masked(text: str, masked: str) -> None:
    assert Masker().text(text) == masked


def test_allow_list_keeps_listed_numbers() -> None:
    m = Masker(allow=["13800000000", "110105194912310021", "qa@example.com"])
    assert m.text("13800000000") == "13800000000"
    assert m.text("138-0000-0000") == "138-0000-0000"
    assert m.text("１３８００００００００") == "１３８００００００００"
    assert m.text("110105194912310021") == "110105194912310021"
    assert m.text("qa@example.com") == "qa@example.com"
    assert m.text("13900000000") == "139****0000"
    assert m.text("ops@example.com") == "o***@example.com"


def test_allow_list_entry_written_with_separators() -> None:
    m = Masker(allow=["138 0000 0000"])
    assert m.text("13800000000") == "13800000000"


def test_allow_listed_email_does_not_keep_other_emails() -> None:
    m = Masker(allow=["qa1@example.com"])
    assert m.text("qa1@example.com") == "qa1@example.com"
    assert m.text("boss1@corp.com") == "b***@corp.com"


def test_allow_list_matches_with_country_code() -> None:
    assert Masker(allow=["13800000000"]).text("+86 13800000000") == "+86 13800000000"


def test_masking_off_keeps_personal_data() -> None:
    m = Masker(enabled=False)
    text = "13800000000 11010519491231002X a@b.cn"
    assert m.text(text) == text
    assert m.data({"13800000000": [text]}) == {"13800000000": [text]}


def test_secrets_replaced_even_when_masking_is_off() -> None:
    m = Masker(enabled=False, secrets=["s3cr3t-token", "abc"])
    # secrets shorter than 4 characters are ignored (they would mangle ordinary text)
    assert m.text("Bearer s3cr3t-token abc 13800000000") == "Bearer *** abc 13800000000"


def test_secrets_replaced_before_masking_longest_first() -> None:
    m = Masker(secrets=["token", "token-extended"])
    assert m.text("x token-extended y token z") == "x *** y *** z"
    assert Masker(secrets=["pa55word"]).text("u:pa55word@13800000000") == "u:***@138****0000"


def test_data_masks_nested_values_and_keys() -> None:
    m = Masker(secrets=["tok123"])
    value = {
        "13800000000": ["a@b.cn", ("x", 1), {"deep": "ID 110105194912310021"}],
        "k": {"tok123": None, "f": 1.5, "b": True},
    }
    assert m.data(value) == {
        "138****0000": ["a***@b.cn", ["x", 1], {"deep": "ID 110***********0021"}],
        "k": {"***": None, "f": 1.5, "b": True},
    }


def test_data_leaves_scalars_alone() -> None:
    m = Masker()
    assert m.data(None) is None
    assert m.data(42) == 42
    assert m.data("13800000000") == "138****0000"


def test_a_result_is_masked_by_type_and_keeps_its_identity() -> None:
    m = Masker()
    clean = item("A", turns=[turn(knowledge={"mileage": "3.37万公里", "year": 2021})])
    assert m.result(clean) == clean.model_dump(mode="json")
    dirty = item("CASE-13912345678", turns=[turn(knowledge={"tel": 13912345678})],
                 nodeid="cases/a.yaml::CASE-13912345678")
    masked = m.result(dirty)
    assert masked["turns"][0]["knowledge"] == {"tel": "139****5678"}
    assert (masked["id"], masked["nodeid"]) == ("CASE-13912345678",
                                                "cases/a.yaml::CASE-13912345678")


def test_a_result_masking_left_alone_is_typed_without_validating_it_again() -> None:
    """Without xdist the recorder folds the typed result itself when masking changed
    nothing: it must be what validating the masked payload gives, identity included; a
    result that masking changed (a phone anywhere, the id's own aside) is validated."""
    from pytest_agenteval.model.results import ItemResult

    from factories import intent, judged, row, scenario

    m = Masker()
    identity = {"nodeid": "cases/a.yaml::A", "file": "cases/a.yaml", "line": 7,
                "trial": 1, "trials": 3}
    results = [
        item("A", turns=[turn(knowledge={"mileage": "3.37万公里", "year": 2021, "x": 1.5})]),
        item("B", "failed", turns=[turn("failed", rules=[row("R-1", "failed", veto=True)],
                                        intent_=intent("A", "B"))]),
        scenario("S", "review", turn(index=0, judge=judged("review", {"relevance": 3})),
                 turn(index=1)),
    ]
    for result in results:
        masked, typed, copy = m.result_typed(result, **identity)
        assert typed is not None, result.id
        assert (typed.nodeid, typed.file, typed.line, typed.trial, typed.trials) == (
            "cases/a.yaml::A", "cases/a.yaml", 7, 1, 3)
        assert set(identity) <= typed.model_fields_set
        assert typed == ItemResult.model_validate(masked)
        assert typed.model_dump(mode="json") == masked == copy
        masked["turns"][0]["rules"].append({})  # the copy shares no container with it
        assert copy is not None and copy != masked
    dirty = item("D", turns=[turn(knowledge={"note": "请拨13912345678"})])
    masked, typed, copy = m.result_typed(dirty, **identity)
    assert typed is None and copy is None
    assert masked["turns"][0]["knowledge"] == {"note": "请拨139****5678"}
    named = item("CASE-13912345678", nodeid="cases/a.yaml::CASE-13912345678")
    assert m.result_typed(named)[1] is None  # its id stays as written: validated, as before


# --- mask first, then cut: a cut never leaves part of a value -------------------------------

from pytest_agenteval.privacy import clip  # noqa: E402


@pytest.mark.parametrize(("text", "n", "clipped"), [
    ("身份证110101199003077777，请核对", 10, "身份证…"),           # 13 of 18 digits: no
    ("key sk-abcdefghijklmnop end", 12, "key…"),                 # part of a key: no
    ("我的手机138 1234 5678谢谢", 11, "我的手机…"),                # a spaced number too
    ("mail a.b@example.com now", 12, "mail…"),
    ("hello world this is text", 12, "hello world…"),            # words: cut between them
    ("短文本", 10, "短文本"),
    ("价格3.37万，里程12000公里，车况很好", 14, "价格3.37万，里程…"),
    ("电话 138 - 0013 - 8000 谢谢", 12, "电话…"),                  # separators of any kind
    ("电话幺三八零零幺三八零零零", 9, "电话…"),                       # said in Chinese digits
])
def test_a_cut_never_splits_a_token_or_a_number(text: str, n: int, clipped: str) -> None:
    assert clip(text, n) == clipped
    assert len(clip(text, n)) <= n


SECRET = "sk-test-0123456789abcdefghijklmnopq"  # 35 characters, like the key


@pytest.mark.parametrize("cut", [9, 12, 20, 34])
def test_a_prefix_of_a_secret_is_masked_wherever_it_was_cut(cut: int) -> None:
    masker = Masker(secrets=[SECRET])
    shown = masker.text(f"HTTP 401: bad key {SECRET[:cut]}… (truncated)")
    assert shown == "HTTP 401: bad key ***… (truncated)"


def test_a_secret_is_masked_even_with_masking_off_and_a_short_common_head_is_kept() -> None:
    masker = Masker(enabled=False, secrets=[SECRET])
    assert masker.text(f"a {SECRET} b") == "a *** b"
    assert masker.text("sk-test is the prefix of every test key") == \
        "sk-test is the prefix of every test key"  # 7 characters: no secret


def test_url_credentials_are_masked() -> None:
    masker = Masker()
    assert masker.text("--agenteval-target=https://bob:s3cr3t@api.example.com/chat") == \
        "--agenteval-target=https://***@api.example.com/chat"
    assert masker.text("http://api.example.com/a@b") == "http://api.example.com/a@b"


def test_a_key_echoed_where_the_error_is_cut_leaks_no_part(project, pytester,
                                                            monkeypatch) -> None:
    """A 401 body echoing the Authorization header: the error detail is cut at 300
    characters, inside the key. No prefix of it longer than 8 characters may appear."""
    from agents import by_id, read_record

    monkeypatch.setenv("AGENT_KEY", SECRET)
    project({"k.yaml": "cases:\n  - {id: K-1, request: {input: __echo401__}}\n"},
            target="  headers: {Authorization: 'Bearer ${AGENT_KEY}'}\n")
    result = pytester.runpytest("cases", "--junitxml=junit.xml", "-p", "no:cacheprovider")
    error = by_id(read_record(pytester.path))["K-1"]["error"]
    assert error["kind"] == "http_status" and error["detail"].startswith("HTTP 401: xxx")
    artefacts = [result.stdout.str(), (pytester.path / "junit.xml").read_text("utf-8"),
                 *(p.read_text("utf-8") for p in (pytester.path / "reports").glob("*/results.*"))]
    for text in artefacts:
        assert SECRET[:9] not in text


@pytest.mark.parametrize(("text", "masked"), [
    ("幺三八 一二三四 五六七八", "幺三八****五六七八"),
    ("我电话一三九零零零零一二三四，谢谢", "我电话一三九****一二三四，谢谢"),
    ("手机：幺三七-二二二二-三三三三", "手机：幺三七****三三三三"),
])
def test_a_mobile_number_read_out_in_chinese_digits_is_masked(text: str, masked: str) -> None:
    assert Masker().text(text) == masked


@pytest.mark.parametrize("text", [
    "一三八一二三四五六七八九零",   # twelve spoken digits: not a mobile number
    "这车一三万", "幺三八", "一万三千八百", "二一三八一二三四五六七八",
])
def test_other_chinese_numbers_are_untouched(text: str) -> None:
    assert Masker().text(text) == text


def test_allow_list_keeps_a_spoken_test_number() -> None:
    assert Masker(allow=["13812345678"]).text("幺三八一二三四五六七八") == "幺三八一二三四五六七八"


# -- the quick check ---------------------------------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from pytest_agenteval import _pii, privacy  # noqa: E402

#: digits (both widths, spoken), the separators the patterns allow, and what sits around
#: numbers and addresses
_PIECES = st.sampled_from([*"0123456789０１２３４５６７８９ -\t+86Xx@.a是号一幺两零./()#", "13",
                           "138", "1380013", "\u3000", "@example.com", " at ", " dot ", "[at]",
                           "qq", ".com", "电话", "护照", "A123456(7)", "%40", "点", "。",
                           "com", "＠", "艾特", "dot", "match#1", "123456(A)", "12345"])


@settings(max_examples=600, deadline=None)
@given(st.lists(_PIECES, max_size=40).map("".join))
def test_the_quick_check_never_skips_what_the_patterns_would_mask(text: str) -> None:
    """A string the quick check passes over is one that every finder leaves as it is:
    the check is only a shortcut."""
    if not _pii.maybe(text):
        for finder in (_pii._emails, _pii._runs, _pii._documents):
            assert finder(text) == [], (finder.__name__, text)


_AT_PIECES = st.sampled_from([*"@＠[](（）){}<>【】aAt艾特小老鼠#圈★☆ \u3000\txq.点", "at", "AT",
                              "艾特", "小老鼠", "圈a", "(a)", "[at]", " at ", "qq", "dot"])


@settings(max_examples=600, deadline=None)
@given(st.lists(_AT_PIECES, max_size=30).map("".join))
def test_the_obfuscated_at_is_found_where_the_pattern_alone_finds_it(text: str) -> None:
    """Trying the pattern only where a match can start (``_weak_ats``) finds what its own
    scan of every position finds."""
    assert [m.span() for m in _pii._weak_ats(text)] == \
        [m.span() for m in _pii._WEAK_AT_RE.finditer(text)]


@pytest.mark.parametrize("text", ["BENCH-00123:keyword_match#1", "价格 12.8 万，里程 3.37 万公里",
                                  "2026-12-01T21:16:40.123456", "2026-12-01", "at turn 3",
                                  "see issue #12"])
def test_ids_prices_and_times_skip_the_patterns(text: str) -> None:
    assert not _pii.maybe(text)


@pytest.mark.parametrize("text", ["HK ID: A123456(A)", "id A123456(7), ok", "138-0013-8000",
                                  "(852) 9123 4567", "a@b.co", "bob#example.com",
                                  "bob at example dot com"])
def test_the_quick_check_passes_ascii_texts_of_few_digits_that_hold_data(text: str) -> None:
    """The digit count that skips the number patterns for an ASCII text (six digits and a
    bracket, a Hong Kong ID with its check letter, are enough) and the dot that every
    obfuscated address has."""
    assert _pii.maybe(text) and _pii.spans(text)


def test_a_half_character_becomes_a_replacement_character_and_hashes_anyway() -> None:
    """Agent replies are made whole at the adapter; what reaches the judge's prompt and
    cache from elsewhere (a case file's ``"\\ud83d"``) is hashed without an error."""
    from pytest_agenteval.adapters import AgentReply
    from pytest_agenteval.judge.cache import cache_key
    from pytest_agenteval.judge.prompt import fenced

    assert privacy.whole("好\ud83d的") == "好\ufffd的" and privacy.whole("ok") == "ok"
    reply = AgentReply(output="\ud83d好", intent_name="\udc00", conversation_id="c\ud800")
    assert (reply.output, reply.intent_name, reply.conversation_id) == (
        "\ufffd好", "\ufffd", "c\ufffd")
    assert cache_key("\ud83d") != cache_key("\ud83e")
    assert fenced({"reply": "\ud83d"})[0]


def _reference_data(m: Masker, v: object) -> object:
    """What :meth:`Masker.data` is, written plainly: every string masked (mapping keys
    too), lists and tuples as lists, None and bools kept, numbers masked by their digits,
    anything else as its masked text."""
    if isinstance(v, str):
        return m.text(v)
    if isinstance(v, dict):
        return {m.text(k if isinstance(k, str) else str(k)): _reference_data(m, x)
                for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [_reference_data(m, x) for x in v]
    if v is None or isinstance(v, bool):
        return v
    if isinstance(v, int | float):
        masked = m.text(str(v))
        return v if masked == str(v) else masked
    return m.text(str(v))


_TEXT = st.one_of(st.lists(_PIECES, max_size=12).map("".join), st.text(max_size=8))
_SCALAR = st.one_of(st.none(), st.booleans(), _TEXT, st.integers(), st.floats(allow_nan=False),
                    st.integers(min_value=10**10, max_value=10**12))
_DATA = st.recursive(_SCALAR, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.tuples(inner, inner),
    st.dictionaries(st.one_of(_TEXT, st.integers()), inner, max_size=4)), max_leaves=25)


@settings(max_examples=300, deadline=None)
@given(_DATA)
def test_data_is_the_plain_walk(value: object) -> None:
    """The walk's shortcuts (the memo, a mapping's scalars without a call) change nothing:
    the same masked copy as the plain definition, with a masker fresh or already warm."""
    fresh, warm = Masker(secrets=["tok123"]), Masker(secrets=["tok123"])
    warm.data(value)
    assert fresh.data(value) == _reference_data(Masker(secrets=["tok123"]), value)
    assert warm.data(value) == fresh.data(value)
