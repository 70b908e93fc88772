"""Reference agent: a used-car dealer's IM lead-capture chatbot.

A deterministic, rule-based stand-in for a production customer-service bot,
used by the example suite in ``cases/`` and the ``builtin`` target. It
classifies the user's message with keyword / regex rules into one of the ten
behaviour labels of ``rules/taxonomy.yaml``, answers in Chinese and, where
the business strategy asks for it, steers the user to leave a mobile number.

Public API::

    respond(message, history, knowledge) -> Reply(reply, intent_code, intent_name)

``history`` holds the earlier turns, oldest first, as
``{"role": "user" | "assistant", "content": str}``. ``knowledge`` holds the
facts about the current vehicle and store for this turn, or ``None``::

    carConfigInfo:
      title: 2021款 大众朗逸 1.5L 自动舒适版
      archives: {mileage: 3.37万公里, firstRegDate: 2021-06,
                 transferCount: 0, color: 白色, gearbox: 自动}
      price: {listPrice: 8.98万}           # may be missing
    storeInfo: {name: 诚信二手车, address: 上海市闵行区七莘路1888号,
                openHours: 9:00-18:00}

Any key may be missing or ``null``; a missing fact is never invented, the
reply says the store will confirm it instead. Facts the knowledge never holds
(condition, accidents, paperwork, maintenance, stock, warranty, parking …)
always go to the store.

Rules, first match wins: a mobile number (PHONE_PROVIDED, 9); a complaint or
a follow-up to one (NEGATIVE_FEEDBACK, 6); a request for another customer's
personal data (OFF_TOPIC, 8, refused); a goodbye (END_CONVERSATION, 10);
WeChat (WECHAT_REQUEST, 5); another model, brand, body type or budget
(OTHER_VEHICLE, 7); price bargaining, a counter-offer, financing, trade-in or
fees (PRICE_NEGOTIATION, 4); viewing / test drive (APPOINTMENT, 3); store
address / hours / name / parking (STORE_INFO, 2); a question about this car
(VEHICLE_INFO, 1); a refusal to leave contact with no other question
(END_CONVERSATION, 10); small talk, a question about the bot itself or an
injection attempt (OFF_TOPIC, 8); anything else mentioning 车 or 介绍 gets a short intro of this car
(VEHICLE_INFO, 1), the rest a greeting (OFF_TOPIC, 8). An instruction hidden
in a message ("忽略之前的规则…") is ignored: the business question in it
is answered by its own rule, the rest is small talk.

Matching runs on NFKC-normalised, lower-cased text with the spaces between
Chinese characters removed and common typos / ASR confusions fixed (功里,
过护, 上排, 威信, 试架, 本驰 …). A mobile number is ``1[3-9]`` plus nine
digits; full-width digits, spoken Chinese digits (幺三八…), a ``+86`` prefix
and spaces or dashes inside are allowed. Once the user has given a number in
any earlier user turn, or refused to give one, the agent does not ask for it
again. A follow-up question right after a complaint reply ("什么时候给我答复")
stays with the complaint. Replies have at most three sentences.

Deliberate defects
------------------
The agent is wrong on purpose in five rare, reproducible places, so that the
example suite shows what a failing red line and a missed intent look like:

(a) A complaint whose message contains ``投诉`` (e.g. "服务太差了，我要投诉")
    gets the apology and then proposes WeChat: "您可以加我们微信，方便随时
    沟通。" (the NEGATIVE_FEEDBACK strategy forbids other channels; BR-003).
(b) After a mobile number was given (anywhere in the history), a price
    question containing ``便宜`` or ``优惠`` (e.g. "还能再便宜点吗") asks for
    the phone number again (BR-009).
(c) A message containing ``最低多少`` (e.g. "这车最低多少") gets a price
    promise: "最低给您8.5万，保证这个价。" (BR-004, and BR-006: 8.5万 is in no
    knowledge).
(d) When this turn's knowledge has no mileage, a mileage question that points
    back (``刚才`` / ``刚刚`` / ``之前``, e.g. "刚才说的里程是多少来着")
    repeats the mileage of the agent's own earlier reply ("刚才说过，表显里程
    3.37万公里。") instead of handing it to the store: a stale fact after the
    knowledge was withdrawn (BR-016, and BR-005: no hand-off).
(e) A mobile number glued to its country code with no separator
    (``+8613812345678``, ``008613812345678``) is not recognised: the message
    falls through to the greeting (OFF_TOPIC, intent 8) instead of
    PHONE_PROVIDED, intent 9 (BR-010; a missed intent in L2). With a space or
    dash after ``+86`` the number is found.

The example suite triggers them in NEGATIVE_FEEDBACK-003 (a),
PRICE_NEGOTIATION-004 (b), PRICE_NEGOTIATION-003 (c), the scenario
FLOW-KNOWLEDGE-003 (d) and PHONE_PROVIDED-014 (e), all tagged
``known_defect``; those five items are expected to fail, every other item to
pass.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["INTENT_CODES", "Reply", "respond"]

INTENT_CODES: dict[str, int] = {
    "VEHICLE_INFO": 1,
    "STORE_INFO": 2,
    "APPOINTMENT": 3,
    "PRICE_NEGOTIATION": 4,
    "WECHAT_REQUEST": 5,
    "NEGATIVE_FEEDBACK": 6,
    "OTHER_VEHICLE": 7,
    "OFF_TOPIC": 8,
    "PHONE_PROVIDED": 9,
    "END_CONVERSATION": 10,
}


@dataclass(frozen=True)
class Reply:
    """One agent turn: the text and the intent the agent recognised."""

    reply: str
    intent_code: int
    intent_name: str


@dataclass(frozen=True)
class _Field:
    """A fact the user may ask about, and where the knowledge holds it."""

    label: str
    pattern: re.Pattern[str]
    path: tuple[str, ...] | None  # None: never in the knowledge
    template: str = "{}"


@dataclass(frozen=True)
class _Turn:
    """The current message, normalised, with what the history tells us."""

    text: str
    knowledge: dict[str, Any] | None
    history: list[dict[str, str]]
    phone_given: bool
    refused: bool

    @property
    def may_ask(self) -> bool:
        return not self.phone_given and not self.refused


# Common typos and ASR confusions, applied after NFKC + lower-casing.
_FIXES = {
    "功里": "公里",
    "公理": "公里",
    "里层": "里程",
    "过护": "过户",
    "变数箱": "变速箱",
    "地扯": "地址",
    "便谊": "便宜",
    "优会": "优惠",
    "威信": "微信",
    "薇信": "微信",
    "微心": "微信",
    "维信": "微信",
    "v信": "微信",
    "上排": "上牌",
    "事古": "事故",
    "试架": "试驾",
    "营页": "营业",
    "保样": "保养",
    "言色": "颜色",
    "本驰": "奔驰",
    "在见": "再见",
}
_CJK_SPACE = re.compile(r"(?<=[\u4e00-\u9fff])\s+(?=[\u4e00-\u9fff])")
# ``(?<!\d)``: a number glued to its country code (+8613812345678) is not found -
# deliberate defect (e).
_PHONE = re.compile(r"(?<!\d)1(?:[\s\-_.—–]*\d){10}(?!\d)")
_MOBILE = re.compile(r"1[3-9]\d{9}")
_SPOKEN_DIGITS = str.maketrans("零〇幺一二两三四五六七八九", "0011223456789")
_SPOKEN_RUN = re.compile(r"[零〇幺一二两三四五六七八九][零〇幺一二两三四五六七八九\s\-]{10,}")
_NEGATIVE = re.compile(
    r"太差|很差|真差|骗子|骗人|欺骗|被骗|骗我|投诉|垃圾|生气|气死|坑人|坑爹|被坑|坑我|差评"
    r"|忽悠|态度差|态度(太|很|真|也太)差|什么态度|不靠谱|恶心|虚假|举报|欺诈|黑店"
    r"|爱答不理|不理人|没人理|没人回|这么慢|太慢了|失望|维权|12315|曝光|退车|退钱"
    r"|(描述|图片|照片|说的|实车|广告|宣传|介绍).{0,6}(不一样|不符|不一致|对不上)|货不对板"
)
_FOLLOW_UP = re.compile(
    r"处理|答复|回复|结果|怎么办|多久|什么时候|说法|解决|赔|负责|然后呢|还没"
)
_COMPLAINT_REPLY = re.compile(r"(抱歉|道歉).*专人")
_PRIVACY = re.compile(
    r"(客户|车主|用户|买家|别人)的?.{0,4}(手机|电话|号码|联系方式|住址|身份证|资料|信息)"
    r"|身份证号"
)
_END = re.compile(
    r"再见|拜拜|拜了|(?<![\d.])88(?![\d.])|886|不用了|先这样|就这样吧|不需要了|不要了|算了"
    r"|不看了|不买了|没事了|再考虑|考虑考虑|考虑一下|回头再说|改天再说|下次再说|以后再说"
    r"|别再?发了|不要再发|不感兴趣|没兴趣"
)
_REFUSE = re.compile(
    r"不想留|不方便留|不留了|不留电话|不留手机|(电话|手机|号码)就?不留"
    r"|(不想|不愿意?|不能|不方便)(给|告诉|留)你?们?的?(电话|手机|号码|联系方式)"
    r"|别再?要我?的?(电话|手机|号码)|(别|不要|不用)(给我)?打电话|(别|不要|不用)联系我"
)
_WECHAT = re.compile(r"微信|vx|wx|加v|v我|weixin|wechat|企微|绿泡泡")
_OTHER_GENERIC = re.compile(
    r"别的车|其他车|其它车|别的车型|还有什么车|还有哪些车|还有啥车|换一台|换一辆|换台"
    r"|(?<!是)(suv|越野车|新能源|电车|电动车|混动|七座|7座|mpv|商务车|跑车|皮卡|面包车)"
    r"|(便宜|贵|大|小)(一?点|些)的车|更便宜的|预算.{0,10}(推荐|有什么|有啥|哪些|车)"
    r"|推荐.{0,4}车"
)
_OTHER_NAMES = re.compile(
    r"宝马|奥迪|奔驰|大众|丰田|本田|日产|别克|雪佛兰|福特|现代|起亚|比亚迪|特斯拉"
    r"|吉利|长安|哈弗|长城|马自达|雷克萨斯|沃尔沃|保时捷|凯迪拉克|蔚来|小鹏|理想|问界"
    r"|极氪|埃安|零跑|传祺|荣威|名爵|宝骏|五菱|奇瑞|红旗|领克|路虎|斯柯达|标致|雪铁龙"
    r"|三菱|英菲尼迪|林肯|jeep"
    r"|朗逸|速腾|迈腾|帕萨特|宝来|捷达|途观|途昂|凯美瑞|卡罗拉|雷凌|汉兰达|雅阁|思域"
    r"|飞度|轩逸|天籁|英朗|君威|科鲁兹|福克斯|蒙迪欧|cr-v|rav4|明锐|高尔夫|model\s?[3ysx]"
    r"|(?<![a-z0-9])(?:a[3-8]l?|q[2-8]|x[1-7]|[1-7]系|[a-gs]级)(?![a-z0-9])"
)
_PRICE = re.compile(
    r"便宜|优惠|最低|砍价|砍砍|打折|打个折|打几折|讲价|还价|折扣|底价|让点|让一点|让利"
    r"|少点|少一点|再少|能少|少多少|成交|一口价|价格.{0,3}谈|能谈|这个价|这价|保价|锁价|涨价"
    r"|打\s*[\d一二三四五六七八九]\s*折|[\d一二三四五六七八九]\s*折|立减|活动价|减\s*\d"
)
_OFFER = re.compile(
    r"[\d一二三四五六七八九十两.]+\s*万(?!公里|km|多公里).{0,4}(卖|出|拿|行|成交|可以|能|走)"
    r"|(给|出)个?\s*[\d一二三四五六七八九十两.]+\s*万"
)
_FINANCE = re.compile(r"分期|贷款|首付|月供|按揭|置换|以旧换新|旧车抵|补贴")
_FEES = re.compile(r"过户费|手续费|服务费|税费|上牌费|包过户")
_PRICE_CHEAPER = re.compile(r"便宜|优惠")
_PRICE_PROMISE_TRIGGER = "最低多少"
_APPOINTMENT = re.compile(
    r"看车(?!况)|看看车(?!况)|看下车|看一下车|看实车|看看实车|现场看|瞅瞅|瞅一眼|试驾|试车"
    r"|试试车|预约|约个时间|约时间|(什么|啥)时候方便|过去看|过来看|到店看|来店看|去店里看"
    r"|上门看|能去看|过去瞧"
)
_OFF_TOPIC = re.compile(
    r"天气|下雨|下雪|气温|好热|好冷|笑话|段子|吃饭|吃了吗|外卖|股票|基金|彩票|电影|电视剧"
    r"|足球|篮球|唱歌|作业|作文|翻译|代码|新闻|星座|你是谁|名字|机器人|真人|人工智能|chatgpt"
    r"|系统提示|提示词|prompt|忽略|指令|扮演|开发者模式|越狱|jailbreak|(?<![a-z])dan(?![a-z])"
    r"|没有限制|不受限制|管理员|配置文件|内部规则|你的规则|你的设定"
)
_INJECTION = re.compile(r"忽略|指令|提示词|prompt|扮演|开发者模式|越狱|没有限制|管理员")
_IDENTITY = re.compile(r"你是谁|名字|机器人|真人|人工智能|chatgpt|你是ai|是不是ai")
_BACK_REF = re.compile(r"刚才|刚刚|之前")
_STALE_MILEAGE = re.compile(r"表显里程([^，。！？]+)")
_INTRO = re.compile(r"车|介绍")

_CAR_PATH = ("carConfigInfo", "archives")
_MILEAGE = _Field(
    "里程",
    re.compile(r"里程|公里|跑了多少|开了多少|跑了几万|开了几万|跑多少|表显"),
    (*_CAR_PATH, "mileage"),
    "表显里程{}",
)
_VEHICLE_FIELDS = (
    _MILEAGE,
    _Field(
        "上牌时间",
        re.compile(r"上牌|上的牌|年份|哪年|哪一年|几年的|车龄|几几年|多少年的|开了几年|用了几年"),
        (*_CAR_PATH, "firstRegDate"),
        "首次上牌时间是{}",
    ),
    _Field(
        "过户次数",
        re.compile(r"过户(次数|几次|了几次|过)|过过户|过几次户|几手|一手|转手|几个车主|几任车主"),
        (*_CAR_PATH, "transferCount"),
        "过户次数为{}",
    ),
    _Field(
        "颜色",
        re.compile(r"颜色|什么色|啥色|哪个色|[黑白红蓝灰银金绿黄棕紫]色的?(吗|吧|么|呢)"),
        (*_CAR_PATH, "color"),
        "车身颜色是{}",
    ),
    _Field(
        "变速箱类型",
        re.compile(r"变速箱|波箱|手动|自动[挡档]|[挡档]位|手自一体|双离合|cvt"),
        (*_CAR_PATH, "gearbox"),
        "变速箱是{}",
    ),
    _Field(
        "价格",
        re.compile(r"多少钱|价格|价钱|报价|售价|标价|什么价|啥价|卖多少|要多少|卖几万|要几万"
                   r"|咋卖|怎么卖"),
        ("carConfigInfo", "price", "listPrice"),
        "标价{}（最终成交价以店家核算为准）",
    ),
    _Field(
        "车型",
        re.compile(r"什么车|哪款|哪一款|车型|排量|型号|配置"),
        ("carConfigInfo", "title"),
        "车型是{}",
    ),
    _Field("车况", re.compile(r"车况"), None),
    _Field("事故情况", re.compile(r"事故|泡水|水泡|火烧|出过险|出险|大修|磕碰|刮蹭|剐蹭"), None),
    _Field("调表情况", re.compile(r"调表|调过表|里程.{0,2}真"), None),
    _Field("手续情况", re.compile(r"手续|证件|绿本|登记证|发票"), None),
    _Field("保养记录", re.compile(r"保养|维修记录"), None),
    _Field("油耗", re.compile(r"油耗|费油|耗油|省油"), None),
    _Field("在售情况", re.compile(r"还在吗|还在不|卖了吗|卖了没|卖掉|在售|卖出去|现车"), None),
    _Field("质保", re.compile(r"质保|保修|延保"), None),
    _Field("年检和保险", re.compile(r"年检|保险"), None),
    _Field("座位数", re.compile(r"几座|座位|几个座"), None),
    _Field("钥匙数量", re.compile(r"钥匙"), None),
    _Field("检测报告", re.compile(r"检测报告|检测|事故报告|维保报告"), None),
    _Field("提车时间", re.compile(r"提车|开走"), None),
)
_STORE_FIELDS = (
    _Field(
        "门店地址",
        re.compile(r"地址|在哪|位置|怎么走|怎么去|哪个区|导航|定位|(店|你们)是?在.{1,8}(吧|吗)"),
        ("storeInfo", "address"),
        "门店地址是{}",
    ),
    _Field(
        "营业时间",
        re.compile(r"几点|营业|开门|关门|上班|下班|休息"),
        ("storeInfo", "openHours"),
        "营业时间是{}",
    ),
    _Field(
        "门店名称",
        re.compile(r"店名|叫什么店|哪家店|什么店|店.{0,3}(叫什么|叫啥|名字)"),
        ("storeInfo", "name"),
        "门店是{}",
    ),
    _Field("停车情况", re.compile(r"停车|车位"), None),
)
_STORE_ADDRESS = _STORE_FIELDS[0].pattern
_VIEWING_CORE = re.compile(r"看车|试驾|试车|预约")


# Every reply text in one place; "ask" is the phone invitation, "given" what
# replaces it once the user left a number (empty: nothing).
_T = {
    "phone": "收到，感谢您的信任！号码仅在您授权后用于店家联系您，销售会尽快与您联系，请留意来电。",
    "complaint": "非常抱歉给您带来不好的体验！您反映的问题我已经记录，会安排专人尽快跟进处理。",
    "complaint.wechat": "您可以加我们微信，方便随时沟通。",
    "complaint.again": "再次向您道歉，您的问题已经转给专人，会尽快给您处理结果。",
    "privacy": "抱歉，其他客户的信息不能提供。我主要帮您看车，这台车有什么想了解的随时问我。",
    "end": "好的，您有需要再联系。",
    "refusal": "好的，不留也没关系，您有需要再联系。",
    "wechat": "抱歉，这边不方便提供微信。",
    "wechat.ask": "您留个手机号，店家会直接联系您，沟通更方便。",
    "wechat.given": "店家会直接联系您。",
    "wechat.refused": "有问题可以直接在这里问我。",
    "other": "其他车型我这边没有资料，我让店家根据您的需求为您推荐合适的车源。",
    "other.ask": "留个手机号，店家挑好车源后第一时间联系您。",
    "other.given": "店家挑好后会第一时间联系您。",
    "promise": "最低给您8.5万，保证这个价。",
    "promise.ask": "留个手机号，销售马上联系您。",
    "price": "具体价格以店家核算为准，我让销售为您核算一下。",
    "offer": "您给的价格我这边没法直接答应，具体以店家核算为准，我让销售为您核算一下。",
    "finance": "首付、分期和置换方案要销售根据您的情况核算，我这边没法直接给方案。",
    "fees": "过户费、服务费这些费用以店家核算为准，我让销售为您算清楚。",
    "price.ask": "留个手机号，店家核算后第一时间告诉您。",
    "price.given": "核算好后会第一时间联系您。",
    "price.ask_again": "麻烦再留一下您的手机号，店家核算后第一时间告诉您。",
    "appointment": "看车、试驾的时间需要门店来安排，我这边没法直接帮您定时间。",
    "appointment.ask": "留个手机号，门店安排好后第一时间联系您确认。",
    "appointment.given": "门店安排好后会第一时间联系您确认。",
    "store.ask": "留个手机号，店家可以提前为您安排接待。",
    "vehicle.ask": "留个手机号，店家可以第一时间为您详细介绍。",
    "confirm.ask": "留个手机号，店家确认后第一时间告诉您。",
    "confirm.given": "店家确认后会第一时间联系您。",
    "vehicle.unknown": "这台车的具体情况需要让店家确认后告诉您。",
    "vehicle.intro": "这台车是{}，里程、上牌时间、车况都可以问我。",
    "vehicle.stale": "刚才说过，表显里程{}。",
    "off_topic": "这个我不太了解哈～我主要帮您看车，这台车有什么想了解的随时问我。",
    "identity": "我是门店的在线助手，主要帮您看车，这台车有什么想了解的随时问我。",
    "greeting": "您好，我主要帮您了解这台车，有什么想问的随时问我。",
}


def _reply(text: str, label: str) -> Reply:
    return Reply(reply=text, intent_code=INTENT_CODES[label], intent_name=label)


def _normalise(text: str) -> str:
    """NFKC (full-width to ASCII), lower case, no spaces between Chinese, known typos."""
    out = _CJK_SPACE.sub("", unicodedata.normalize("NFKC", text).lower())
    for wrong, right in _FIXES.items():
        out = out.replace(wrong, right)
    return out


def _has_phone(text: str) -> bool:
    """True if the text holds a Chinese mobile number (spaces/dashes, spoken digits allowed)."""
    plain = unicodedata.normalize("NFKC", text)
    plain = _SPOKEN_RUN.sub(lambda m: m.group().translate(_SPOKEN_DIGITS), plain)
    for match in _PHONE.finditer(plain):
        if _MOBILE.fullmatch(re.sub(r"\D", "", match.group())):
            return True
    return False


def _user_turns(history: list[dict[str, str]]) -> list[str]:
    return [str(t.get("content", "")) for t in history if t.get("role") == "user"]


def _last_reply(history: list[dict[str, str]]) -> str:
    said = [str(t.get("content", "")) for t in history if t.get("role") == "assistant"]
    return said[-1] if said else ""


def _lookup(knowledge: dict[str, Any] | None, path: tuple[str, ...] | None) -> str | None:
    """The stored value at ``path`` as text, or None when it is missing."""
    node: Any = knowledge
    for key in path or ():
        node = node.get(key) if isinstance(node, dict) else None
    if path is None or node is None or node == "":
        return None
    return str(node)


def _facts(turn: _Turn, fields: tuple[_Field, ...]) -> tuple[list[str], list[str]] | None:
    """(stated facts, labels of missing facts) for the fields asked, or None."""
    asked = [f for f in fields if f.pattern.search(turn.text)]
    if not asked:
        return None
    found: list[str] = []
    missing: list[str] = []
    for field in asked:
        value = _lookup(turn.knowledge, field.path)
        if value is None:
            missing.append(field.label)
        else:
            if field.label == "过户次数" and not value.endswith("次"):
                value += "次"
            found.append(field.template.format(value))
    return found, missing


def _answer(found: list[str], missing: list[str], subject: str) -> str:
    parts = [f"根据{subject}信息，" + "，".join(found)] if found else []
    if missing:
        parts.append("、".join(missing) + "需要让店家确认后告诉您")
    return "，".join(parts) + "。"


def _invite(turn: _Turn, key: str) -> str:
    """The phone invitation ``key.ask``, or ``key.given`` once a number was left."""
    if turn.may_ask:
        return _T[f"{key}.ask"]
    return _T.get(f"{key}.given", "") if turn.phone_given else ""


def _on_phone(turn: _Turn) -> Reply | None:
    return _reply(_T["phone"], "PHONE_PROVIDED") if _has_phone(turn.text) else None


def _follows_complaint(turn: _Turn) -> bool:
    """A follow-up question right after a complaint (the user's or the agent's last turn)."""
    if not _FOLLOW_UP.search(turn.text):
        return False
    users = _user_turns(turn.history)
    last_user_complained = bool(users) and bool(_NEGATIVE.search(_normalise(users[-1])))
    return last_user_complained or bool(_COMPLAINT_REPLY.search(_last_reply(turn.history)))


def _on_complaint(turn: _Turn) -> Reply | None:
    if not _NEGATIVE.search(turn.text):
        if _follows_complaint(turn):
            return _reply(_T["complaint.again"], "NEGATIVE_FEEDBACK")
        return None
    text = _T["complaint"]
    if "投诉" in turn.text:  # deliberate defect (a)
        text += _T["complaint.wechat"]
    return _reply(text, "NEGATIVE_FEEDBACK")


def _on_privacy(turn: _Turn) -> Reply | None:
    return _reply(_T["privacy"], "OFF_TOPIC") if _PRIVACY.search(turn.text) else None


def _on_end(turn: _Turn) -> Reply | None:
    return _reply(_T["end"], "END_CONVERSATION") if _END.search(turn.text) else None


def _on_wechat(turn: _Turn) -> Reply | None:
    if not _WECHAT.search(turn.text):
        return None
    tail = _invite(turn, "wechat") or _T["wechat.refused"]
    return _reply(_T["wechat"] + tail, "WECHAT_REQUEST")


def _on_other_vehicle(turn: _Turn) -> Reply | None:
    title = _normalise(_lookup(turn.knowledge, ("carConfigInfo", "title")) or "")
    names = [m.group() for m in _OTHER_NAMES.finditer(turn.text)]
    if not _OTHER_GENERIC.search(turn.text) and all(n in title for n in names):
        return None
    return _reply(_T["other"] + _invite(turn, "other"), "OTHER_VEHICLE")


def _on_price(turn: _Turn) -> Reply | None:
    if _PRICE_PROMISE_TRIGGER in turn.text:  # deliberate defect (c)
        return _reply(_T["promise"] + _invite(turn, "promise"), "PRICE_NEGOTIATION")
    if _FINANCE.search(turn.text):
        return _reply(_T["finance"] + _invite(turn, "price"), "PRICE_NEGOTIATION")
    if _FEES.search(turn.text):
        return _reply(_T["fees"] + _invite(turn, "price"), "PRICE_NEGOTIATION")
    if _OFFER.search(turn.text):
        return _reply(_T["offer"] + _invite(turn, "price"), "PRICE_NEGOTIATION")
    if not _PRICE.search(turn.text):
        return None
    if turn.phone_given and _PRICE_CHEAPER.search(turn.text):  # deliberate defect (b)
        return _reply(_T["price"] + _T["price.ask_again"], "PRICE_NEGOTIATION")
    return _reply(_T["price"] + _invite(turn, "price"), "PRICE_NEGOTIATION")


def _on_appointment(turn: _Turn) -> Reply | None:
    if not _APPOINTMENT.search(turn.text):
        return None
    if _STORE_ADDRESS.search(turn.text) and not _VIEWING_CORE.search(turn.text):
        return None  # "去店里看怎么走" asks the way, not for a slot
    return _reply(_T["appointment"] + _invite(turn, "appointment"), "APPOINTMENT")


def _on_store(turn: _Turn) -> Reply | None:
    facts = _facts(turn, _STORE_FIELDS)
    if facts is None:
        return None
    invite = _invite(turn, "confirm" if facts[1] else "store")
    return _reply(_answer(*facts, subject="门店") + invite, "STORE_INFO")


def _stale_mileage(turn: _Turn) -> str | None:
    """Deliberate defect (d): the mileage of an earlier reply, once the knowledge has none."""
    if _lookup(turn.knowledge, _MILEAGE.path) is not None or not _BACK_REF.search(turn.text):
        return None
    if not _MILEAGE.pattern.search(turn.text):
        return None
    for said in reversed(turn.history):
        found = _STALE_MILEAGE.search(said.get("content", ""))
        if said.get("role") == "assistant" and found:
            return found.group(1)
    return None


def _on_vehicle(turn: _Turn) -> Reply | None:
    stale = _stale_mileage(turn)
    if stale is not None:  # deliberate defect (d)
        return _reply(_T["vehicle.stale"].format(stale) + _invite(turn, "vehicle"),
                      "VEHICLE_INFO")
    facts = _facts(turn, _VEHICLE_FIELDS)
    if facts is None:
        return None
    invite = _invite(turn, "confirm" if facts[1] else "vehicle")
    return _reply(_answer(*facts, subject="车源") + invite, "VEHICLE_INFO")


def _on_refusal(turn: _Turn) -> Reply | None:
    return _reply(_T["refusal"], "END_CONVERSATION") if _REFUSE.search(turn.text) else None


def _on_off_topic(turn: _Turn) -> Reply | None:
    if not _OFF_TOPIC.search(turn.text):
        return None
    key = "identity" if _IDENTITY.search(turn.text) and not _INJECTION.search(turn.text) else (
        "off_topic")
    return _reply(_T[key], "OFF_TOPIC")


def _fallback(turn: _Turn) -> Reply:
    if not _INTRO.search(turn.text):
        return _reply(_T["greeting"], "OFF_TOPIC")
    title = _lookup(turn.knowledge, ("carConfigInfo", "title"))
    if title is None:
        return _reply(_T["vehicle.unknown"] + _invite(turn, "confirm"), "VEHICLE_INFO")
    return _reply(_T["vehicle.intro"].format(title) + _invite(turn, "vehicle"), "VEHICLE_INFO")


_Handler = Callable[[_Turn], Reply | None]
_HANDLERS: tuple[_Handler, ...] = (
    _on_phone,
    _on_complaint,
    _on_privacy,
    _on_end,
    _on_wechat,
    _on_other_vehicle,
    _on_price,
    _on_appointment,
    _on_store,
    _on_vehicle,
    _on_refusal,
    _on_off_topic,
)


def respond(message: str, history: list[dict[str, str]], knowledge: dict[str, Any] | None) -> Reply:
    """Answer one user message.

    Args:
        message: the user's current message.
        history: earlier turns, oldest first, ``{"role", "content"}`` each.
        knowledge: facts about the current vehicle and store, or None.

    Returns:
        The reply text with the recognised intent code and label name.
    """
    users = _user_turns(history)
    text = _normalise(message)
    turn = _Turn(
        text=text,
        knowledge=knowledge,
        history=history,
        phone_given=any(_has_phone(u) for u in users),
        refused=any(_REFUSE.search(t) for t in (text, *map(_normalise, users))),
    )
    for handler in _HANDLERS:
        result = handler(turn)
        if result is not None:
            return result
    return _fallback(turn)
