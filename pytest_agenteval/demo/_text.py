"""Text handling of the reference agent: normalisation, mobile-number detection, the
history helpers and the regex vocabulary its rules match on."""

from __future__ import annotations

import re
import unicodedata

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
_VIEWING_CORE = re.compile(r"看车|试驾|试车|预约")


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
