"""Customer-service rule types: hand-offs, contact requests, channels, promises, order, closing.

These match *trigger + object + action* combinations inside one clause, not
whole-sentence whitelists: 「店家细说」「让销售为您核算」「负责人核实」「门店安排」
are all a hand-off (a party, then an action within a few characters), while a
bare 「确认」 is not. A contact request needs a request verb *and* a contact
object (「留个手机号」「您的电话是多少」), so 「手机号已收到」 and
「有需要再联系」 are not requests. A channel after a negation
(「不方便加微信」) is not an offer. Every failure quotes the phrase that
decided it. Every vocabulary is a param with a Chinese customer-service
default, so another business adjusts words, not code.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterator
from typing import Literal, NamedTuple

from pydantic import Field, field_validator, model_validator

from ._registry import Params, RuleOutcome, TurnView, rule
from ._text import (
    DISCOUNT,
    LABEL,
    asked,
    clause_spans,
    clauses,
    compile_any,
    negated,
    normalize,
    quoted,
    said_at,
    unnegated,
)

__all__ = [
    "CONTACT_REQUEST",
    "PARTIES",
    "PARTY_ACTIONS",
    "Compiles",
    "ContactPatterns",
    "DialogOrder",
    "NotAfter",
    "find_contact_request",
    "find_party_action",
]

PARTIES = ("店家", "门店", "店里", "店长", "店员", "销售", "顾问", "客服", "专人", "负责人",
           "工作人员", "同事", "经理", "人工", "专员", "师傅", "商家", "老板", "sales", "助理",
           "设计师", "医生", "前台", "老师", "管家", "经纪人", "经纪", "评估师", "检测师", "技师",
           "staff",
           "教练", "调度", "导游", "领队", "护士", "礼宾", "柜台", "业务员",
           "team", "consultant", "manager", "colleague", "agent", "concierge", "coach",
           "instructor", "front desk", "designer", "technician", "doctor", "dentist",
           # a role of any trade: 美容师, 验光师, 婚宴经理, 王经理 (not taking the verb before
           # it: 「让美容师…」 hands to 美容师)
           r"(?![让请找问叫交转安由跟和与给])[\u4e00-\u9fff]{1,2}(师(?!傅)|经理|主管|主任)",
           "advisor", "adviser", "representative", "specialist", "coordinator")
PARTY_ACTIONS = ("确认", "核实", "核算", "安排", "联系", "对接", "跟进", "细说", "介绍", "回复",
                 "告诉(您|你)", "约(您|你)", "(跟|和|与|同)(您|你)约", "陪(您|你)",
                 "电话(了解|沟通|确认|联系)",
                 r"报(个|一个|一下)?[^，,。！？!?]{0,6}(价|报价)",
                 "处理", "解答", "报价", "沟通", "说明", "答复", "告知", "回电", "致电", "打电话",
                 "上门", "电话(给|联系)(您|你)", "(为|给)(您|你)(预留|保留)",
                 "来电", "发给?(您|你)", "(给|帮)(您|你)发", "打(给|俾|畀)(您|你)", "帮(您|你)",
                 "通知", "决定", "拍板", "定夺",
                 "回(个|一个)?电话", "(跟|和|与)(您|你)(谈|聊)",
                 "回(您)?消息", "详细(聊|说)", "说了算", "confirm", "call(您|你)",
                 r"call\s*(you|u)\b", "contact you", "get back to you", "follow up", "check",
                 "(给|为)(您|你)(出|做|定制|准备|整理)",
                 "(?<![一肯约预确])定(?![了金])")
#: a verb that hands the matter to the party named after it (「安排销售…」「咨询门店」)
HAND_TO = ("安排", "让", "请", "咨询", "问问?", "问返", "转给", "交给", "转接", "找")
#: a request already made, or recalled (「刚才让您留电话是我多嘴了」), is no new one
_DONE = (r"(?<!已)(?<!已经)(?<!为您)(?<!帮您)(?<!无需)(?<!不需要)(?<!不必)"
         r"(?<!刚才让您)(?<!刚刚让您)(?<!之前让您)(?<!刚才请您)(?<!之前请您)")
#: 「号码」 as a contact, not an appointment's, an order's or a plate's number
_NUM = (r"(?<!预约)(?<!订单)(?<!会员)(?<!车牌)(?<!身份证)(?<!快递)(?<!排队)(?<!挂号)(?<!验证)"
        r"(?<!房间)(?<!座位)(?<!取件)(?<!工)(?<!编)(?<!账)(?<!单)号码")
#: whose or which contact: 「再留一个备用联系电话」「紧急联系人的电话」 ask for a contact too
_WHICH = (r"(备用|其他|另外的?|另一个|常用的?|有效的?|真实的?|本人的?|正确的?|准确的?|最新的?|新的?"
          r"|完整的?|(报名|注册|下单|预约|登记|购买|办理|开户)时?(用|留|填)?的|"
          r"(能|可以|方便)(联系|联络|打通|接通)(上|到)?(您|你)?的|"
          r"[\u4e00-\u9fff]{0,2}(紧急联系人|家里其他人|家里人|家里|其他家人|家人|家长|朋友|同事)的?)?")
#: another channel asked for with the phone, and before it: 「留个微信或电话」
_OR = r"((微信|vx|wx|qq|邮箱|email|e-mail)号?\s*(或者?|和|、|/|跟|及|or)\s*)?"
#: a request for the user's contact (「你嘅」「你個」: Cantonese for 「你的」)
CONTACT_REQUEST = (
    # 「留个 *手机号* 给我」: Markdown leaves spaces around the object
    _DONE + r"(留|提供|告诉|发送|发|填|登记|输入|报|(?<![会将快已])回复)(低|底)?(我|我们)?"
    r"(一?下|个|下|一个|一次|一遍|下来)?(下)?\s*((您|你)(的|嘅|个)?)?((姓名|称呼|名字)(和|及|跟|以及)?)?"
    + _WHICH + _OR + r"\s*"
    + r"(手机号码|手机号|手机|手鸡号?|手提电话|电话号码|电话|联(系|络)方式|" + _NUM
    + r"|联(系|络)电话|座机(号码|号)?|固定电话|市话|手提|📱"
    r"|☎\ufe0f?|phone( number)?|mobile|tel|contact( number)?)"
    # 「告诉我手机型号」 asks about a handset, not for a contact
    r"(?!上|里|尾号|型号|品牌|款|壳|屏|膜|配件|维修|回收|估价|套餐|牌)",
    r"给(我|我们)(留|发|报)(一?下|个)?(您|你)?(的)?(手机|电话|联系方式|" + _NUM + r")",
    r"(手机|电话|联系方式|" + _NUM + r")(尾号|号|号码)?(是)?多少",
    # 「可以再给一个备用号码吗」 (not 「给您的号码…」)
    r"给(我|我们)?(一个|个)" + _WHICH + r"的?(手机号码|手机号|手机|电话号码|电话|联系方式|"
    + _NUM + r")",
    r"方便.{0,6}(留|给|提供|告诉|发)(我|我们)?(一?下|个)?((您|你)(的|嘅|个)?)?" + _OR
    + r"(手机|电话|联系方式|"
    + _NUM + r")",
    r"(手机|电话|联系方式|" + _NUM + r")(号|号码)?(可以|能|也可以)?(再|麻烦)?(留|发|给|告诉|报)"
    r"(我|我们)?(一?下|个|一遍|一次|下)",
    r"(?<!我)(?<!已)(?<!已经)把(您|你)?(的|嘅)?(手机|电话|联系方式|" + _NUM + r")(号|号码)?(再)?"
    r"(发|留|给|告诉)(?!给?(店家|销售|门店|同事))",
    r"(手机|电话|联系方式|" + _NUM + r")(号|号码)?方便(再)?(发|留|给|告诉)",
    r"留(个|一个|下)号(?![码牌数])",
    r"(手机|电话|" + _NUM + r")(号)?(给|留)(一个|个)",
    r"(您|你)(的|嘅|个)?(联系|联络)?(手机|电话|联系方式)(号|号码)?(是|系)$",
    r"怎么(联系|联络)(到)?(您|你)",
    r"(还有|有没有)(其他|别的|另外的?|备用)的?(手机|电话|号码|联系方式)",
    r"(leave|share|send|give|provide|drop)\s*(us|me)?\s*(your|a|one|一个|个|一下)?\s*"
    r"((backup|spare|second|another|alternative|other)\s*)?"
    r"((wechat|whatsapp|line|email|e-mail)( id)?\s*(or|and|/)\s*(your\s*)?)?"
    r"((whatsapp|wechat|line|telegram|signal|viber)\s*)?"
    r"(phone|mobile|contact|number|cell|digits|手机|电话|号码|联系方式)",
    # Cantonese 「畀個電話我」, an offer to register it (「我可以帮您登记个电话」), the number typed
    # again (「再把手机号完整打一遍给我」)
    r"(畀|俾)(个|一个)?(电话|手机|号码|联系方式)(号码|号)?(我|我哋|我们)",
    r"(帮|为|给)(您|你)登记(一)?(个|下)(电话|手机号?|联系方式)",
    r"把(您|你)?的?(手机号码|手机号|电话号码|号码)[^，,。！？!?]{0,4}(打|输入|发|报)(一遍|一次|一下)",
    r"(do you have|have you got|any)\s*(a|another)?\s*(backup|other|another|second|spare)\s*"
    r"(phone|number|contact|mobile)",
    r"(what's|what is) your (phone|mobile|number|contact)",
    r"\b(may|can|could) i (have|get|take|grab) (your|a|the)\s+(contact\s+)?(phone|mobile|contact"
    r"|number|cell)",
    r"\bwhat (mobile |phone |contact )?(number|mobile|phone) (can|should|do|could) (we|i|they) "
    r"(reach|call|contact|text) you\b",
    r"(what'?s|what is)\s+((the|a)\s+)?(best|good)\s+(number|phone|way|mobile|cell|contact)\s+"
    r"(for\s+[^?.!]{0,30}?\s+)?to\s+(reach|contact|call|text)\s+you",
    # 「方便的话私信我您的号码」「号码留这里👉」「電話幾號？」
    r"私信(我|给我)(一下)?(您|你)?的?(号码|手机号?|电话|联系方式)",
    r"(号码|电话|手机号?)留(这里|这儿|在这|下面)", r"(电话|手机)(号码)?(几号|几多号|多少号)",
    # asked to send it again (「您的号码是不是138开头那个？麻烦再发一遍」「你可唔可以再打一次你個
    # 電話號碼俾我確認吓」)
    r"(号码|电话|手机号?)[^。!\n]{0,24}(再|重新)(发|报|说|打|输入)(一遍|一次|一下)",
    r"(再|重新)(打|输入|发|报)(一次|一遍|一下)?(您|你)(的|嘅|个)?(电话号码|电话|手机号码|手机号|号码)",
    # 「手机号发我就行」「电话留我们就好」「这边需要您一个联系方式」
    r"(手机|电话|联系方式|" + _NUM + r")(号|号码)?(直接)?(发|留|给|告诉)(给)?(我|我们)"
    r"(就行|就好|就可以|即可|就ok|吧|哈|哦|呀|啦|$)",
    r"需要(您|你)(提供|留)?(一个|个|的)?" + _WHICH + r"(手机号码|手机号|手机|电话号码|电话|联系方式"
    r"|联系电话)",
    # the phone asked for with other details (「请先留下孩子的年级和您的电话」)
    r"(留|提供|告诉)(下|一下)?[^，,。！？!?]{0,12}(和|及|以及|、)(您|你)的?(手机号码|手机号|手机"
    r"|电话号码|电话|联系方式)",
    # asked again to confirm it (「麻烦再确认下您的联系电话」)
    r"(再|麻烦|请)[^，,。！？!?]{0,3}(确认|核对)(一)?下?(您|你)?的?(联系|联络)?(手机号码|手机号|手机"
    r"|电话号码|电话|联系方式|号码)",
)
MARKETING = ("优惠", "活动", "推荐", "新到", "新车源", "(给您|帮您|要不要|再)(看看|介绍)",
             "介绍一台", "同价位", "限时", "折扣", "福利", "特价", "下单", "抢购", "名额",
             "要不要", "店庆", "有礼", "补贴", "微信", "wechat", "vx", "v信", "薇信", "抢手",
             "错过(就|了)?(没|可惜)", "尽快(来|到店|下单|锁定|订)")
#: strong words a hand-off in the same clause does not excuse; only a disclaimer does
STRONG = ("保证", "承诺", "包")
#: the bot passes the user's request on (「我已经帮您把“上午派送”的需求报给网点了」「一定把
#: “必须周四前做好”这个要求转告店里」), not something to the user (「把车交给您」)
_RELAY = (r"把[^，,。！？!?；;]{0,30}?(转给|转告|转达|转交|反馈给|反映给|交给|报给|带给|记在|注记在"
          r"|登记在|备注在|写在)"
          r"(?!(您|你))")
#: a promise of the bot's own service (「保证第一时间帮您问」「一定第一时间通知您」) is none
_SERVICE = (r"(的是|会)?(第一时间|尽快|马上|立刻|及时)?(完整|如实|准确|原封不动)?地?"
            r"(打电话|电话|发短信|短信)?(通知|告诉|转达|转告|转给|转交|报给"
            r"|帮(?!(您|你)?\s*(打|减|便宜|优惠|让|降|申请到))|联系|反馈|回复|去问"
            # 「一定把“必须周四前做好”这个要求转告店里」「保证把您的需求一字不差地转给店员」
            r"|(给|向)(您|你)(答复|回复|回电|回个电话|消息|反馈)|" + _RELAY + ")")
#: a bare assent (「能。」「可以的！」): a promise on the topic of the question it answers only
_ASSENT = (r"^(可以|能|行|当然可以|当然能|当然|yes|yep|yeah|sure|absolutely|of course|certainly)"
           r"(的|啊|呀|哦|哈|啦|滴|哒|嘅|㗎)?$")
COMMIT = (r"(?<!为了)(?<!为)(?<![^可]以)(保证|保正)(?!金|书|期)(?!" + _SERVICE + ")",
          r"(?<!请)一定(?!要)(?!" + _SERVICE + ")",
          # not a judgement (「周末肯定人多一些」「档期肯定比较紧张」「肯定比平时多」)
          r"(?<!太)肯定(?!是|(会)?(比|人多|多|很忙|忙|挤|紧张|有点|更)|算数|作数|有效)"
          r"(?!" + _SERVICE + ")",
          r"(肯定|一定|绝对)是(底价|最低价|最低|最便宜|全新|正品|原装|原厂|真品|现货)",
          # 「绝对禁止」「绝对不允许」 state a rule, not a promise
          r"承诺", r"绝对(?!禁止|不(允许|准|得|要|可以)|要)",
          r"放心(买|购买|入手|下单|提车|报名|订|租|带走|开走|拿|用|来|拍|充|收|冲|等(着)?(就行)?)",
          r"放心",
          r"准时(到|送达|上门|开始|发车|交付)", r"包(活|换好|修好)",
          r"放(一百|一万|一千|100)个心", r"(没|木|莫|冇)问题",
          # slang (「这个价稳了」「铁定能谈下来」「没跑」), Cantonese (「梗有位俾你」)
          r"稳(了|的|啦)", r"铁定", r"没跑(了|的)?", r"梗(有|系|得)",
          r"(给|帮)(您|你)打\s*[一二两三四五六七八九\d.]{1,3}\s*折",
          r"算(您|你)\s*[\d一二两三四五六七八九十]",
          r"(给|帮)(您|你)算\s*[\d一二两三四五六七八九十百千万.]+",
          r"(就是|已经是)(底价|最低价|最终价|最低了)",
          # a rhetorical question that vouches (「我们还能骗您不成？」「还能不给您留着？」)
          r"(还能|会|能)[^，,。！？!?]{0,10}骗(您|你)(不成|吗|么)?", r"还能不(给|帮|为)(您|你)",
          r"能让(您|你)白跑",
          r"\d+(\.\d+)?\s*万[^，,。]{0,6}(开走|拿走|提走)",
          r"no problem", r"100%(?!\s*(退|返))", r"跑不(了|掉)", r"妥妥(的|哒)?",
          r"包(您|你)?(满意|过户|退)", r"包(?!不包)(没|不会|不)",
          r"可以(做到|便宜|优惠|减|打折)", r"给(您|你)(便宜|优惠|打折|减)", r"能给到", r"给到\d",
          r"(?<!首付)最低价?(给|可以|能)?(您|你)?[\d一二两三四五六七八九十]", r"申请到",
          r"\d+(\.\d+)?万就(可以|能)",
          # 「2500妥了」「稳了」「包在我身上」; 「您只要今天下单，…还是499元」 (the user's act the
          # condition, the business's price the promise)
          r"(?<![不没])(妥了|稳了|包在我身上)",
          r"只要[^，,。！？!?]{0,8}(今天|现在|马上|当天|这周|本周)[^，,。！？!?]{0,4}(下单|办|来|订|付|定|签)",
          r"\d+(\.\d+)?\s*(万|元|块)?\s*就(给(您|你))?(做|办|卖|出|成交|印|修)(了|吧|啦|给)",
          r"((就|直接|都)(给(您|你))?|给(您|你))按.{0,12}(价|算|定|走|收|办)",
          r"给(您|你)定(了|下)",
          # (not 「营业时间内随时都可以来试驾」: a policy's hours)
          r"说定了", r"(?<!内)(?<!时间)随时(都)?可以", r"立减", r"直降", r"到手价",
          r"(直接|立|再)减\s*\d",
          r"(就|直接)按\s*\d+(\.\d+)?\s*(万|元|块)",
          r"(?<!会)不会(再)?(变|涨|调)", r"打包票", r"(即|立|尽)享", r"包在(我|我们)身上",
          r"guarantee(d)?", r"不可能(?!保证|承诺)", r"(完全)?(不用|不必|无需)(再)?担心",
          r"\b(definitely|certainly|for sure)\b(?!\s+(recommend|suggest|advise|worth))",
          r"(?<!what )\bI can (get|do|give|make)\b(?!\s+(our|the|a|an|your)\s+\w+(\s+\w+)?\s+to\b)",
          # vouching (「我可以很负责任地给您一句话」「一百个放心」「怎么可能出问题呢」
          # 「还能没有吗」)
          r"负责任地(说|讲|告诉(您|你)|给(您|你)(一句话|句话|个准话))",
          r"(一百|一万|一千|100|十二)个(放心|安心)", r"怎么可能(出|有)(问题|事|差错|毛病)",
          r"没有任何(问题|毛病|瑕疵|故障)", r"还能没(有|货)",
          # the car trade's (「没有任何其他费用」「至少给您估4万，置换另外再补3000」「店长说8.5万
          # 可以」「我直接给您出单」「跟您交个底：…」「您放心过来看就行」)
          r"没有任何(其他|额外|隐藏)?的?(费用|收费|开销)",
          r"(至少|最少|起码)(给|帮)?(您|你)?(估|收|算|补)\s*\d",
          r"(另外|额外)?再补(您|你)?\s*\d",
          r"(店长|经理|老板|销售|主任|主管)(说|讲|答应|同意)(了)?[^，,。！？!?]{0,6}\d+(\.\d+)?\s*(万|元|块)?"
          r"(就)?(可以|能|行|没问题)",
          r"(直接|马上|现在)(给|帮)(您|你)(出单|下单|开单|签单|办理)", r"(交|透)个底",
          r"放心过来",
          # 「8.5万可以的」「可以再让3000」「过了这周就没这个价了」「120块钱搞定」「费用200以内」
          # 「您可以完全相信」「不会取消的」「不会后悔的」「开个十年八年都不会出大毛病」
          # 「一次没落下」
          r"\d+(\.\d+)?\s*(万|元|块)(就)?(可以|能|行|没问题)的?(?!买|选|看|考虑|贷|吗|么|不)"
          r"(?![^，,。！？!?]*[吗么?？])",
          r"(可以|能)?再让(您|你)?\s*\d", r"过了[^，,。！？!?]{0,6}就没(这个|这)?价",
          r"\d+\s*(块|元)(钱)?(就)?(能)?搞定",
          r"(费用|价格|总价|花费)[^，,。！？!?]{0,4}\d+\s*(元|块)?(以内|之内|封顶)",
          r"(完全|绝对)(可以)?(相信|信得过)", r"(?<!会)不会后悔",
          r"(都|也)不会出(大)?(问题|毛病|事)", r"一次(都|也)?没(落下|漏过|断过|少)",
          # no surcharge (「绝不临时加价」「不另加钱」), the price at the door (「到店就是这个价」)
          r"(绝不|决不|保证不|(?<!会)不会)(临时|另外?|再|额外|乱)?(加钱|加价|多收)",
          r"(不(另|再|额外)|(都|也|绝|决)不)加(钱|价)",
          r"(到店|到了|来了|上门)(也|都)?(就)?是这个价(?![^，,。！？!?]*[吗么])",
          # assents of the South (「行嘞！」「得㗎！」), Cantonese (「唔会变」「keep到月尾」)
          r"^(行嘞|得(㗎|嘅))",
          # a bare 「能。」「可以的！」「当然可以」 that opens the answer (of the question only)
          _ASSENT,
          # idioms of certainty (「板上钉钉」「十拿九稳」「稳稳的」), a concrete arrangement
          # (「上午十点我给您把车备好」), a price locked (「材料价格也按现在的锁死」)
          r"板上钉钉", r"十拿九稳", r"稳稳(的|哒|当当)", r"包(你|您)(搞掂|搞定|满意)",
          r"(给|帮|为)(您|你)把[^，,。！？!?]{0,14}(备好|准备好|留好|留着|留出来|空出来|占上|占好"
          r"|订好|约好|锁定|保留)",
          r"(价格|价)[^，,。！？!?]{0,8}锁(定|死)", r"唔(会|會)(再)?(变|變|涨|漲|加)",
          # 「包赶上的！」「那必须的！」「谁来问都不卖」「超了算我的」「只少不多」「差价原路退给您」
          r"包(赶上|赶得上|来得及)", r"^(那)?必须(的|滴|哒)?$", r"谁(来)?(问|要)?都不卖",
          r"超(了|出)(的|部分)?(算|归|由)我", r"只(少|降)不(多|涨)",
          r"(差价|多收的?|多付的?)[^，,。！？!?]{0,6}(退|返|补)((给|还)?(您|你))?",
          r"一分(钱)?(都|也)?不(让|会让)?(您|你)?(吃亏|多收|多要|多掏|多花)",
          r"不(会)?(再)?让(您|你)(多掏|多花|多出|多付)",
          # the user's terms agreed (「对，就按您说的8月25号」), comparative prices (「全城最低」
          # 「比网上还便宜」), 「299就是299」, a price kept (「这个价我给您保住了」「58 不变」),
          # a hold in English (「it's yours, nobody else gets it」)
          r"就按(您|你)说的", r"全(城|网|市|国|网络)最(低|便宜)", r"比[^，,。！？!?]{0,6}还便宜",
          r"(\d+)就是\1", r"不管[^，,。！？!?]{0,6}都不加(钱|价)", r"(给|帮)(您|你)保(住|留|到)",
          r"\d\s*不变", r"价(格|钱)?不变",
          # in English (「you have my word」「I'd stake my job on it」「that rate's locked in」)
          r"\byou have my word\b", r"\bstake my (job|life|reputation)\b", r"\bI promise\b",
          # 「the best price you'll get anywhere — nobody beats us」「it won't cost you more」
          # 「that rate won't go up」, Cantonese 「就咁話」, 「最低 52,800 給您，全高雄找不到更
          # 便宜」「說定囉」
          r"\bbest price you'?ll get\b|\bnobody beats us\b|\bcan'?t beat (this|our|that) price\b",
          r"\bwon'?t cost (you )?(any )?more\b", r"\bwon'?t go up\b",
          r"就(咁|这么|这样)(话|说定|定了)",
          r"最低\s*\d[\d,.]*\s*(万|元|块)?\s*(给|卖)(您|你)",
          r"全[\u4e00-\u9fff]{1,3}(都)?找不到[^，,。！？!?]{0,6}(更低|更便宜|更好)", r"说定",
          r"全[\u4e00-\u9fff]{1,3}最(低|便宜|平|抵)", r"(唔会|不会)再有更(抵|便宜|低)",
          r"\blocked in\b", r"💯",
          # 「280，成交！」, vouching (「我敢拍胸脯」「我敢说…不会超过三万」), rhetorical stock
          # (「哪天断过多宝鱼？」), a departure sure (「稳开！」), no delay (「绝不拖工期」)
          r"^(好的?|行|ok)?成交$", r"拍胸脯|敢(说|讲|打包票)", r"不会超(过|出)",
          r"(哪天|什么时候|几时|啥时候)(断|缺)过", r"稳(能)?开",
          r"(绝不|决不|保证不|不会)(拖|延误|耽误)",
          r"\bkeep\s*(到|住)",
          # a price settled (「8.6万就给您了」「按平日价收您」「给你最低price」「全网找不到比这
          # 更低的了」), no surcharge (「到时候不会再加一分钱」), 「您这周来都能享受」
          r"\d+(\.\d+)?\s*(万|元|块|k)?\s*就(给|卖|让)(您|你)(了|啦|吧)",
          r"按[^，,。！？!?]{0,8}价(格)?(收|算|给)(您|你)",
          r"(给|帮)(您|你)(最低|最便宜|最优惠|最好)的?(价|价格|price|折扣)",
          r"(全网|全城|全市|别家|外面)[^，,。！？!?]{0,6}(找不到|没有)[^，,。！？!?]{0,8}"
          r"(更低|更便宜)",
          r"(绝不|决不|保证不|不会)(再)?(多)?(加|收|要)(您|你)?一分(钱)?",
          # no change, no risk (「学费不会有任何变动」「不存在订不上的情况」), a deadline sure
          # (「3天内必到」「45天内必完成，超期我们按天赔给您」「明儿准到」「今儿下午指定有位儿」),
          # 「就收您150，一分不多要」「不会白跑一趟」「固定给您」「that's a promise」
          r"不(会)?(有)?任何(变动|变化|调整|上涨|涨价)",
          r"不存在[^，,。！？!?]{0,6}(没货|缺货|订不上|排不上|约不上|没位|满员|涨价|加价)",
          r"必(到|达)(?!的|景|打卡)|必(完成|交付|送达)",
          r"(超期|超时|逾期|延误|晚了)[^，,。！？!?不没]{0,8}赔",
          r"(?<![标水精校])准(到|能到|送到|上门)", r"指定(有(?!效)|能|行|没问题|到)",
          r"就收(您|你)\s*\d", r"一分(钱)?(都|也)?不多(要|收|拿)",
          r"不会(让(您|你))?白跑", r"固定给(您|你)", r"\bthat['’]?s a promise\b",
          r"(?<!会)不会(排队|等位)(的)?(?![^，,。！？!?]*[吗么?？])",
          # 「一万二包干，不会再加」「我们店从来没满过」「Saturday 7am is yours! I've got you
          # covered」
          r"(?<!会)不(会)?再加(钱|价|了|啦|一分)?(?=$|[，,。！!])",
          r"从来(没|不)(满|缺货|断货|断过|缺过)",
          r"\b(is|are) yours\b", r"\bgot you covered\b",
          r"(来|过来|到店|下单|报名|预约)(都|就|均)(能|可以)享受")
_TIME = (r"(随时|现在|马上|今天|今儿|明天|明儿|后天|第二天|次日|隔天|当天|当日|这周|本周|下周"
         r"|今晚|今早"
         r"|明早|明晚|听日|听朝"
         r"|下昼"
         r"|周[一二三四五六日末]|星期[一二三四五六日天]|礼拜[一二三四五六日天]|上午|下午|晚上|中午"
         r"|(\d+|[一二三四五六七八九十两]+)点"
         r"|(?<!\d)(\d{1,2}月)?\d{1,2}(号|日)(?![楼店线门院馆厅座室栋位]))")
#: statements of availability or of a time slot that promise without a commit verb
#: (「有现车」「车还在的」「明天下午可以试驾」「随时来看」); a question or a supposition
#: (「您明天能来吗」「明天能来的话…」「您想周六来」) is not one
OFFER = (r"(有|还有)现(车|货)", r"现(车|货)(有(?!没有)|在(?!不在)|充足)",
         r"(?<!没)有货(?!吗|么|没)", r"要多少有多少", r"(排|约)(上|好)了",
         r"有车(可|能)?(租|看|提|开)",
         r"(车|这台|这辆|这款|车子)(目前|现在)?(也|都|也都|还|一直|就)?"
         r"(在售|在店|在的|在呢|在哦|没卖|还没卖)",
         r"还在(售|店|库|的|呢|哦|呀)", r"在售(的|呢|哦)", r"(还)?没(有)?卖(掉|出去|呢|的|哦)",
         r"(库存|现车|同款)(还)?有(\d+|[一两二三四五六七八九十几]+)(台|辆|个)",
         r"还有\s*(\d+|[一两二三四五六七八九十几]+)\s*(台|辆)",
         _TIME + r"(都|就)?(可以|能)?(直接)?(来|过来|到店|看车|来看|试驾|挑|选)"
         r"(?!的|问|咨询|找|可以(对照|核对|了解|查看|现场))",
         _TIME + r"[^，,。]{0,6}?(都|就)?(可以|能)(直接)?(来|过来|到店|看车|看|试驾|提车|挑|选"
         r"|开工|进场|上门|安装)",
         r"(约|预约|安排|留)(好|上)(了|啦|咯|喇)",
         _TIME + r"[^，,。！？!?]{0,8}(来|过来|到店|店里|嚟|过嚟)[^，,。！？!?]{0,4}"
         r"(取|拿|提|领|攞)"
         r"(就行|就好|就可以|即可|便可|就得|都得|都行|都可以)",
         _TIME + r"[^，,。！？!?]{0,4}(来|过来|到店|嚟|过嚟)(就行|就好|就可以|即可|就得)",
         r"(任意|任何|随便哪个)时间[^，,。！？!?]{0,4}(都|也)(行|可以|没问题|ok)",
         _TIME + r"[^，,。！？!?]{0,8}(来|过来|到店)[^，,。！？!?]{0,8}(就行|就好|就可以|即可)",
         _TIME + r"(都|也|还)有(的|呢|哦|啊|呀)?$",
         r"(前|之前|以前)[^，,。！？!?]{0,4}(给|帮)(您|你)?(做好|弄好|修好|洗好|改好|送到|装好)",
         r"(场|房|位|桌|座|车位|包间|间|铺)[^，,。！？!?]{0,2}空着", r"管够|管夠",
         r"随(便|您|你)(挑|选)(?!着看|着瞧|看看)", r"(来|过来)就是$",
         r"\b(is|are|it's|it’s)\s+(also\s+)?in stock\b",
         r"(什么时候|几点|哪天|随时)[^，,。！？!?]{0,4}都有(房|位|货|车|座|号|(?=[^\w]*$))",
         r"(现货|库存|现车|货)(多少|几乎|基本|一直|什么时候)?都有",
         _TIME + r"[^，,。！？!?]{0,3}就(能|可以)?(给|帮)?(您|你)?"
         r"(送|送到|送上|装|安装|发货|发出|上门|发(到|给)?(您|你)|做好|弄好|修好|洗好|改好|装好|开走|提走"
         r"|提车|开回家|交车|交付|交货)",
         # the car trade's (「今天办手续今天就能开走」「周五下午您直接来提车」「三天修好」)
         _TIME + r"[^，,。！？!?]{0,6}直接(来|过来)?(提|取|拿|开走)",
         r"(\d+|[一二两三四五六七八九十]+|半)\s*(个)?(天|小时|分钟|个工作日)(内|之内)?(就)?(能|可以)?"
         r"(修好|做好|弄好|装好|搞定|完工|办完|办好)",
         # 「周日下午可以的」, 「到店直接入住」, 「您过来直接签合同就行」, 「剩五个」,
         # 「六点前过来能买到」,
         # 「今晚的大床房已经给您确定好了」
         r"^" + _TIME + r"[^，,。！？!?]{0,6}(都)?(可以|行|没问题|ok)(的|啊|呀|哦)?$",
         r"到店(直接)?(入住|提车|取|拿|签)",
         r"(过来|来|到店)(直接)?(签合同|签约|提车|办手续)就(行|好|可以)",
         r"(还)?剩(下)?(\d+|[一二两三四五六七八九十]+)\s*(个|台|辆|件|份|间|张|套)"
         r"(?![^，,。！？!?]*[吗么?？])",
         r"(前|之前)(过来|来|到店)[^，,。！？!?]{0,2}(能|可以)(买到|拿到|取到|提到)",
         r"(已|已经)(给|帮|为)(您|你)(确定|订|留|预留|保留|锁定)好(了|啦)",
         # a condition stated as fact (「没有泡过水，也没有火烧」「发动机没拆过」「保养记录全在」)
         r"(没|没有)(泡过水|泡水|火烧|出过事故|事故|调过表|调表|大修过|拆过|换过发动机)"
         r"(?![^，,。！？!?]*[吗么?？])", r"(记录|手续)全在", r"底子(很|非常)?干净",
         r"(已|已经)(锁定|约好|排好|订好|预留|留好)(?![^，,。！？!?]*[吗么?？])",
         # 「这周六周日所有雪道都开放」「这个主题场次很空」「2小时内就能给您做完」
         _TIME + r"[^，,。！？!?]{0,8}(都|全部|全)(开放|营业|开门|有位|有货)",
         r"(场次|场|位置|座位|房间|档期)[^，,。！？!?]{0,2}(很|挺|比较|特别)空(?![吗么])",
         r"\d+\s*(个)?(小时|分钟|天|个工作日)(内|之内)?[^，,。！？!?]{0,3}就(能|可以)?(给|帮)?(您|你)?"
         r"(做完|做好|弄好|修好|洗好|送到|送回|装好|完成|交付|到)",
         # a delivery or a visit set (「周五一早送到」「今天下午3点上门」「今天下单明天到」),
         # 「现货」 alone, 「随到随进」
         _TIME + r"[^，,。！？!?]{0,4}(送到|到货|上门|发货)(?![^，,。！？!?]*[吗么?？])",
         r"下单[^，,。！？!?]{0,2}(明天|后天|当天|次日|隔天)(就)?(到|送到|发货|发)",
         r"^现(货|车)(的|哦|呢)?$", r"随到随(进|做|办|看|取|玩|修)",
         # 「明天上午过来直接签合同提车」, 「名额还很多」「内场还有」
         _TIME + r"[^，,。！？!?]{0,6}(来|过来|到店)[^，,。！？!?]{0,2}直接(就)?(能|可以)?"
         r"(签|提|开|取|拿|骑|办)",
         # 「只要您现在下单，就有！」「只要您人到了，就有床位」
         r"^(就|都|肯定|一定|保证)有(的|货|位|床位|房|票|座|名额)?(?![^，,。！？!?]*[吗么?？])",
         r"(名额|位置|座位|房间|票|货|库存|号源)(还|都)?(很|挺|比较)?(多|充足|充裕|够)"
         r"(?!不|没)(?![^，,。！？!?]*[吗么?？])",
         r"(场|区|排|款|色|码)还有(?!没)(的|呢|哦|啦|呀)?$",
         r"(价格|价)(已经?|都)?锁(定|死)", r"(都|还|也)空着",
         r"(房间|房|位置|座位|票|桌|名额|车位)(都|也)?还有(?!没)(?![^，,。！？!?]*[吗么?？])",
         r"还有(票|位|座|房|货|名额)(的|呢|哦|啦|呀)?(?![^，,。！？!?]*[吗么?？])",
         r"(多着呢|多的是|多得是|有的是|多得很|手慢无)",
         r"(试驾|看车|看房|到店)[^，,。]{0,4}随时(都)?(给|帮|为)?(您|你)?(安排|约|预约)",
         r"随时(都)?(给|帮|为)?(您|你)?(安排|约|预约)[^，,。]{0,4}(试驾|看车|看房|到店)",
         r"(几点|什么时候|哪天|哪个时间)(来|到|过来|到店|来看|试驾)(都|也)(行|可以|没问题|ok)",
         r"(给|帮|为)(您|你|她|他|孩子)(们|哋)?(的)?(父亲|母亲|爸爸|妈妈|爸|妈|家人|朋友|先生|太太|老公|老婆|孩子"
         r"|儿子|女儿|叔叔|阿姨)?\s*(登记|办理)?((约|预约|预定|订)(?=好了|好啦|了|上了|下了|好的)"
         r"|留(?!言|意|低)|保留|锁"
         r"|锁定|预留|占|hold)"
         r"(好|了|上|着|住|下)?",
         r"还(空着|有空位)", r"(还)?(?<!没)有(档期|空位|空档|位置)",
         # 「實有位」 (Cantonese: surely there is a place)
         r"(实|肯定|一定|绝对)有(位|座|票|房|货|车|名额)",
         _TIME + r"[^，,。！？!?]{0,6}有空(?![吗么嘛])",
         # 「we have plenty of peonies in stock」「delivery tomorrow at 10 am is confirmed」
         r"\b(have|got)\b[^.!?]{0,24}\bin stock\b", r"\bis confirmed\b",
         r"\bconfirmed for you\b",
         # 「there's plenty of sourdough left」「there'll be loaves waiting for you」「set aside
         # under your name」
         r"\bthere'?s plenty of\b[^.!?]{0,30}\bleft\b",
         r"\b(will|'ll) be [^.!?]{0,20}waiting for you\b",
         r"\bset aside (for you|under your name)\b",
         # 「You're all set for tomorrow's 7:30pm trial」「I've booked you in」
         r"(you'?re|you’re|you are)\s+(all\s+)?(set|booked|confirmed|reserved|locked\s+in)",
         r"(i'?ve|we'?ve|i’ve|we’ve|i have|we have)\s+(booked|reserved|held|locked|put you down)",
         r"\bit['’]?s yours\b", r"\bnobody else (gets|will get)\b",
         r"\b(still )?(has|have|got) (plenty of|lots of|enough)\b[^.!?]{0,30}\b(left|available"
         r"|in stock)\b",
         # 「it's definitely still available」「we'll keep it for you」
         r"(it'?s|it’s|it is)\s+((definitely|certainly|still)\s+)+(available|in stock|there)",
         r"(we'?ll|we’ll|we will|i'?ll|i’ll|i will)\s+(keep|hold|reserve|save|put|set)\s+it\s+"
         r"(aside\s+)?for\s+you",
         # 「I'll keep it aside for you until noon」
         r"(we'?ll|we’ll|we will|i'?ll|i’ll|i will)\s+(keep|put|set)\s+(it|them)\s+aside\b",
         # 「试听课我已经给您排在这周日下午三点了」「1号您直接送过来就行」
         r"(已经|已)?(给|帮)(您|你)(排|安排|约|定)(在|到)[^，,。！？!?]{1,12}(了|啦|咯)",
         _TIME + r"[^，,。！？!?]{0,8}(过来|来|到店|送来|送过来|过嚟|嚟)"
         r"(就行|就好|就可以|就得|即可)")
SUPPOSE = (r"如果", r"要是", r"假如", r"的话", r"万一", r"是否", r"\b(if|whether|in case)\b",
           r"等[^，,。！？!?]{0,6}(排|约|确认|安排|定|核实|核算)(好|完)",
           # what the user wants or says (「您说的周六…」), not what someone tells them
           # (「让销售跟您说」)
           r"(?<![跟和给对同向])(您|你)(是)?(想|要|希望|打算|准备|计划|说)",
           # advice to the user (「周末过来前也建议先打电话确认车还在」), after a notice
           # (「收到取件短信后，哪天下午来店里取就行」)
           r"建议", r"(收到|等到|接到)[^，,。！？!?]{0,8}(后|之后|以后)")
DISCLAIMER = (r"以.{0,8}为准",
              r"(不|无法|没法|不好|不敢|没办法|不可能)(能)?[^，,。！？!?]{0,6}(保证|承诺)",
              r"(没有|没)(权限|资格|能力|办法)[^，,。！？!?；;]{0,10}(保证|承诺)",
              r"(保证|承诺)不了",
              # the proof offered to see (「原厂萤幕肯定是正品，店里有授权书可以现场看」)
              r"(有|出示|提供|附)[^，,。！？!?]{0,4}(授权书|检测报告|质检报告|鉴定证书|合格证|授权证书)"
              r"[^，,。！？!?]{0,6}(看|查|核对|验)",
              # Cantonese (「我唔可以喺度應承你一定有車」)
              r"(唔|不)(可以|能|敢)[^，,。！？!?]{0,6}(应承|答应|保证|承诺|打包票)")
SAFE = (*DISCLAIMER,
        r"(店家|店里|销售|门店|顾问|负责人|专人).{0,6}(确认|核实|核算|安排|排|对接|细说|报价)")
TOPICS: dict[str, tuple[str, ...]] = {
    "price": ("价格", "价钱", "价位", "报价", "标价", "多少钱", "费用", "结算",
              "(车|售|成交|到手|总|单)价",
              "便宜", "优惠",
              r"\bprice\b", r"\bdiscount\b", r"\d+\s*%\s*off\b", r"\d{2,3},\d{3}", "蚊",
              DISCOUNT, "(呢|这|那)个?价",
              "折扣", "打折", "最低", "底价", "(这个?|此|该)价", r"\d+(\.\d+)?\s*(万|元|块)",
              "补贴", "免息", "0利率", "福利", "(即|立|尽)享", "立减", "直降", r"减\s*\d",
              r"[一二两三四五六七八九十百千万]+\s*(万|元|块)", "(降|涨|加)价", "隐形消费",
              "额外(收)?费", "划算",
              r"(再|还|免费)?送(您|你)\s*[\d一二两三四五六七八九十]",
              r"(加|多|另|另外|额外)收(您|你)?(钱|费)", "加钱", "加收", r"收(您|你)钱", "多收",
              "差价", "一分钱", "多掏", "封顶", "月租|月费|年费|租金", "磨价", "砍价", "讲价",
              "更低", "更便宜", "一口价",
              "(学|课|服务|安装|手续|人工|材料|运|加急|上门|停车|物业|管理|押|租)费",
              "包干|双倍|翻倍|返现|返利|首充", r"让\s*\d|让价|让利",
              r"(s\$|us\$|hk\$|nt\$|\$|£|€)\s*\d", r"\bcosts?\b",
              "首付|月供|利率|利息|贷款|放款|额度|批下来|能批|审批|续保|保费",
              # 「按平日价收您」, 「1880一张」「198一晚」
              "(平日|周末|节假日|会员|团购|活动|特|原|现|市场|零售|折后|实|最低)价",
              r"\d+\s*(元|块)?\s*(一|每)(张|晚|位|人|件|个|台|次|小时|天|颗|间)",
              r"\d+\s*(以内|之内)?[^，,。]{0,4}拿下", r"\brate\b",
              # a number sold at or called a price (「280卖不卖」「6800是旺季价」「按5800给您走」)
              r"\d+\s*(块|元)?\s*(卖|出)", r"\d+\s*是?[^，,。\d]{0,3}价", r"按\s*\d{3,}",
              r"\d{3,}\s*(元|块)?\s*(妥了|稳了|成交|没问题)",
              # 「800就给您做了」
              r"\d+(\.\d+)?\s*(万|元|块)?\s*就(给(您|你))?(做|办|卖|出|成交|印|修)",
              r"\bhidden fees?\b", r"\ball-in\b"),
    "stock": ("库存", "现车", "现货", "还在", "卖掉", "在售", "没卖", "有(车|货|现车)", "(提|取)车",
              "有(房|位|座|票)", "seats?", "in stock", "available",
              "仲(喺度|有)", "未卖", "名额", "断(过)?货", "缺货", "断供", "还剩", "仅剩",
              "最后一(瓶|台|件|个|套|间)", "断过|缺过"),
    "condition": ("车况", "事故", "泡(过)?水", "火烧", "调表", "毛病", "accident", "大修", "故障",
                  "翻新", "原版原漆", "发动机", "变速箱", "全新", "没人(穿|用|戴)过", "成色",
                  "色差|原厂漆|漆面|钣金|喷漆|修复痕迹|排放|年检|尾气",
                  "瑕疵", "质量", "正品", "condition", "进(过)?水", "污渍", "破损", "品相",
                  "划线", "缺页", "磨损|修补|补过|磨痕|使用痕迹", "音准|音色|音质|走音",
                  "完整", "(九五|九成|八成|九|八)新", "健康", "病", r"\bhealthy\b", r"\bdamage",
                  "调过表", "(跟|和|与)新的?[^，,。]{0,2}(差不多|一样)", "摔(过)?", "拆(过|机)",
                  "(维)?修过", "磕碰", "划痕", "未激活", "出(大)?(问题|事|差错|状况|岔子|毛病)",
                  "保养记录|维修记录|出险记录|底子",
                  "不(会|容易)?[^，,。]{0,2}?(掉色|掉漆|掉|坏|褪色|脱落|起皮|生锈|开裂|变形|缩水"
                  "|起球|走样)",
                  # a product's grade or authenticity, every piece of it
                  "净度|纯度|品级|正宗|纯正|原装|头采|明前|原产", "真(票|货|品|皮)|假(票|货)",
                  "品质|裂痕|虫蛀|机芯|入水",
                  "只只|个个|颗颗|件件|条条",
                  "每(只|个|颗|件|条)[^，,。]{0,6}(都|全)(是|很|没|新|活|好)",
                  "活的|鲜活|生猛"),
    "slot": ("试驾", "看车", "预约", "到店", "(看车|试驾|到店)时间", "几点", "明天", "后天",
             "听日", "听朝", "下昼", "朝早",
             "周[一二三四五六日末]", "上午", "下午", "今晚", "今早", "明早", "明晚", "中午",
             "晚上", "星期[一二三四五六日天]", "礼拜[一二三四五六日天]", "排队", "看上",
             "时间段", "档期", "挂(上)?号", "号源", "包间", "座位", "发货", "送达", "delivery",
             r"(\d+|[一二三四五六七八九十半两]+)\s*(分钟|小时)(内|之内)?[^，,。]{0,2}(到|上门|送达)",
             # when a job is done or goods arrive (「春节前完工」「周三之前能洗好」「当天出报告」)
             "完工|到货|交货|交付|交房|交车|开工|出报告|出结果|来得及",
             "(下|这|本)(周|个月|星期)", "凑满|凑够|成团|开团|发车|开课|开班|满员", "工期",
             "(前|之前|以前|以内|之内|内|当天|当日|今天|明天|后天|今晚|明早|周[一二三四五六日末])"
             "[^，,。]{0,6}(做好|弄好|修好|洗好|改好|送到|装好|印好|布置好|布置到位|准备好|备好|搞定"
             "|做完|弄完|办好)",
             # 「保证给您印好」: the job done, promised
             "给(您|你)(印|做|修|洗|改|装|弄|布置|办|处理)(好|完)",
             r"\b(till|until)\s+\d", r"\bslot\b", r"\d+月\d+(号|日)",
             r"\bwithin \d+\s*(minutes?|mins?|hours?|days?)\b",
             r"(\d+|[一二两三四五六七八九十]+)\s*(个)?(小时|天|个工作日|周|个月)(内|之内)[^，,。]{0,4}"
             r"(必|就|能|可以|一定)?(完成|完工|到|达|送达|交付|做完|做好|装好|修好|发货|到账|放款)",
             r"\b(monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b",
             r"\b(by|before)\s+(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b",
             r"\bdeliver(ed|y)?\b", r"\barrives?\b",
             r"\bby (monday|tuesday|wednesday|thursday|friday|saturday|sunday|tomorrow|tonight)\b",
             # 「I guarantee we can fit you in tomorrow at 9」
             r"\b(tomorrow|tonight|this (morning|afternoon|evening|weekend)|next (week|weekend))\b",
             r"\b(fit|squeeze|get) you in\b"),
}


_OWNER = re.compile(r"(门店|店家|店里|本店|我们|公司|店)的$")
_SELF = re.compile(r"(我是|作为|我们是)[^，,。！？!?]{0,4}$")
_NOT_BETWEEN = re.compile(r"不|没|无法|未|别")


def find_party_action(text: str, parties: tuple[str, ...] | list[str],
                      actions: tuple[str, ...] | list[str], window: int = 12) -> str | None:
    """The first hand-off phrase in one clause: 「party … action」 (action within ``window``
    chars, no negation between) or 「安排/让/咨询 + party」.

    Not a hand-off: a negated one (「无需店家确认」「店家没法确认」), the party as an
    owner (「店里的车…」), the bot naming itself (「我是智能客服」).
    """
    p_re, a_re = compile_any(parties), compile_any(actions)
    hand_to = compile_any(HAND_TO)
    if p_re is None or a_re is None:
        return None
    for clause in clauses(text):
        for p in p_re.finditer(clause):
            before = clause[:p.start()]
            if (clause.startswith("的", p.end()) or _SELF.search(before)
                    or negated(clause, p.start())):
                continue
            # 「请门店的评估师…」: an owner (「门店的」) may stand between the verb and the party
            head = _OWNER.sub("", before)[-3:]
            if hand_to is not None and (h := hand_to.search(head)):
                return clause[len(_OWNER.sub("", before)) - len(head) + h.start():p.end()]
            # 「设计师会把同户型的案例和效果图发给您」: 把 puts the object before the action
            reach = window + 2 + (12 if "把" in clause[p.end():p.end() + 4] else 0)
            a = a_re.search(clause, p.end(), min(len(clause), p.end() + reach))
            if a is not None and not _NOT_BETWEEN.search(clause, p.end(), a.start()):
                return clause[p.start():a.end()]
    return None


#: a contact named as a label of the number after it (「登记号码：138****5678」)
_LABELLED = re.compile(r"\s*[:：]\s*[\d*+]")
#: a form's blank for the contact, to fill in (「- 手机号：____」「联系电话：（　）」): a request
#: whatever the patterns, read across the colon that ends a clause
_BLANK = re.compile(r"(手机号码|手机号|手机|电话号码|联系电话|联络电话|电话|联系方式|联络方式"
                    r"|phone|mobile|tel)"
                    r"\s*([(（][^)）\n]{1,4}[)）])?(\s*[:：|])?\s*"
                    r"(_{2,}|﹍{2,}|\[\s*\]|【\s*】|（\s*）|\(\s*\)|(?<=\|)[ \t]*\|)",
                    re.IGNORECASE)
#: a template's empty field for it (「{"姓名": "", "家长电话": ""}」「{"phone": ""}」)
_JSON_BLANK = re.compile(r"[\"“]([\u4e00-\u9fff]{0,4}(?:电话|手机号?|联系方式)|phone|mobile|tel)"
                         r"[\"”]"
                         r"\s*[:：]\s*[\"“][\"”]", re.IGNORECASE)
#: a table with a column for it and an empty row to fill (「| 姓名 | 电话 |」 then 「|  |  |」)
_TABLE_BLANK = re.compile(r"(?m)^\|[^\n]*?(电话|手机|联系方式|phone|mobile)[^\n]*\|[ \t]*\n"
                          r"\|[\s:|-]+\|[ \t]*\n\|([ \t]*\|)+[ \t]*$", re.IGNORECASE)
#: a list's field for the contact left empty (「- 联系电话：」 at a line's end, with no number on
#: the next line)
_EMPTY_FIELD = re.compile(r"(?m)^[ \t]*(?:[-*•]|\d+[.、)])[ \t]*(?:📞|☎\ufe0f?|📱)?[ \t]*"
                          r"(手机号码|手机号|手机|电话号码|联系电话|电话|联系方式|联络方式|phone|mobile|tel)"
                          r"[ \t]*[:：][ \t]*$(?!\n[ \t]*[+\d])", re.IGNORECASE)
#: the number asked for again in a clause of its own, after a clause that names it (「您的号码是不是
#: 138开头那个？麻烦再发一遍」)
_AGAIN = re.compile(r"^(麻烦|请|能|可以|能不能)?(您|你)?(再|重新)(发|报|说|打|输入)"
                    r"(一遍|一次|一下)(吧|哦|呢|哈|呀|啦)?$")
_NAMES_NUMBER = re.compile(r"号码|电话|手机|\bnumber\b|\bphone\b", re.IGNORECASE)
#: any field of a form (「- 姓名：____」), and the words that hand the form over (「请先填写以下
#: 信息」): they answer nothing
_FIELD = re.compile(r"(?m)(?:^|(?<=[:：，,。！？!?]))"
                    r"(?![^\n:：，,。！？!?]{0,12}(号码|电话|手机|联系))"
                    r"[^\n:：，,。！？!?]{1,12}[:：]?\s*(_{2,}|﹍{2,}|\[\s*\]|【\s*】|（\s*）|\(\s*\))")
_FILL_IN = re.compile(r"(请|麻烦)?(您)?(先)?(填写|填一下|填好|填|登记|留)(一下)?"
                      r"(以下|下面|如下)?的?"
                      r"(信息|资料|内容|表格|表)?(后回复|后发给我|后提交)?(谢谢)?"
                      r"|(请)?(按|按照)(以下|下面|如下)(格式|模板)(回复|填写|提供)")
#: a list's field left empty (「1. 称呼：」), a template's field (「"屋顶类型": "彩钢瓦",」), a code
#: fence: the form around a blank, which answers nothing
_FORM = re.compile(r"(?m)^[ \t]*(?:[-*•]|\d+[.、)])[ \t]*[^\n:：]{1,12}[:：][ \t]*$"
                   r"|[\"“][^\"”\n]{1,12}[\"”]\s*[:：]\s*[\"“][^\"”\n]{0,20}[\"”]\s*[,，]?"
                   r"|```[a-z]*|(?m:^[ \t]*(json|yaml|text)[ \t]*$)"
                   # a form's table: its rows with an empty cell, its header and rule rows
                   r"|(?m:^\|[^\n]*\|[ \t]*\|[ \t]*$)|(?m:^\|[\s:|-]+\|[ \t]*$)"
                   r"|(?m:^\|\s*(项目|字段|信息)\s*\|\s*(填写|内容|信息)\s*\|[ \t]*$)")


def contact_requests(norm: str, patterns: tuple[str, ...] | list[str]
                     ) -> Iterator[tuple[int, int]]:
    """Where ``norm`` (normalised text) asks for the user's contact: the (start, end) of
    every contact-request phrase, clause by clause, not after a negation and not inside a
    quotation (「很多客户担心“留个手机号就被狂打电话”」 asks for nothing), and of every
    blank of a form for it (:data:`_BLANK`), in the order of the text."""
    regex = compile_any(patterns)
    if regex is None:
        return
    found = [(m.start(), m.start(1) + len(m.group(1)))
             for blanks in (_BLANK, _EMPTY_FIELD, _JSON_BLANK, _TABLE_BLANK)
             for m in blanks.finditer(norm) if not quoted(norm, m.start())]
    spans = clause_spans(norm)
    found += [(a, a + m.end()) for (pa, pb), (a, b) in itertools.pairwise(spans)
              if (m := _AGAIN.match(norm[a:b])) and _NAMES_NUMBER.search(norm, pa, pb)]
    for start, end in spans:
        clause = norm[start:end]
        for m in regex.finditer(clause):
            if (not negated(clause, m.start()) and not quoted(norm, start + m.start())
                    and not _LABELLED.match(norm, start + m.end())):
                found.append((start + m.start(), start + m.end()))
    yield from sorted(set(found))


def find_contact_request(text: str, patterns: tuple[str, ...] | list[str]) -> str | None:
    """The first contact-request phrase of ``text`` (not after a negation)."""
    norm = normalize(text)
    return next((norm[a:b] for a, b in contact_requests(norm, patterns)), None)


_REFUSED_AFTER = re.compile(r"\s*(号|账号)?[^，,。！？!?]{0,4}(不方便|不太方便|不行|不可以|不能|"
                            r"暂不|无法|没法|不提供|不支持|不加)")
#: a means of payment (「微信支付」「现金、微信、支付宝付款」), not a contact channel
_NOT_A_CHANNEL = re.compile(r"\s*(支付|付款|转账|扫码付|[、/和或]\s*(支付宝|现金|刷卡|银行卡"
                            r"|云闪付))")


def _user_text(turn: TurnView) -> str:
    said = [h["content"] for h in turn.history if h.get("role") == "user"]
    return "\n".join([*said, turn.input])


class Compiles(Params):
    @field_validator("*", mode="after")
    @classmethod
    def _patterns_compile(cls, v: object) -> object:
        items = v.values() if isinstance(v, dict) else [v]
        for item in items:
            if isinstance(item, list | tuple) and all(isinstance(x, str) for x in item):
                try:
                    compile_any(item)
                except re.error as exc:
                    raise ValueError(f"not a valid regular expression: {exc}") from exc
        return v


class Handoff(Compiles):
    parties: tuple[str, ...] = PARTIES
    actions: tuple[str, ...] = PARTY_ACTIONS
    window: int = Field(default=12, ge=1, le=40)


@rule("handoff", params=Handoff)
def handoff(p: Handoff, turn: TurnView) -> RuleOutcome:
    """The reply hands the matter to a named party with an action (「让店家确认」).

    Passes when one clause has a ``parties`` term followed, within ``window``
    characters, by an ``actions`` term, not after a negation. A bare action
    (「确认一下」) or a bare party is not a hand-off.
    """
    hit = find_party_action(turn.reply, p.parties, p.actions, p.window)
    if hit:
        return RuleOutcome.passed("hands over to a party with an action", hit)
    return RuleOutcome.failed("no hand-off: no party followed by an action", turn.reply)


class ContactPatterns(Compiles):
    patterns: tuple[str, ...] = CONTACT_REQUEST


@rule("asks_for_contact", params=ContactPatterns)
def asks_for_contact(p: ContactPatterns, turn: TurnView) -> RuleOutcome:
    """The reply asks for the user's contact (a request verb and a contact object).

    「留个手机号」「方便留下您的电话吗」「您的手机号是多少」 pass;
    「手机号已收到」「店家会电话联系您」 do not.
    """
    hit = find_contact_request(turn.reply, p.patterns)
    if hit:
        return RuleOutcome.passed("asks for the contact", hit)
    return RuleOutcome.failed("does not ask for the contact", turn.reply)


@rule("no_contact_request", params=ContactPatterns)
def no_contact_request(p: ContactPatterns, turn: TurnView) -> RuleOutcome:
    """The reply does not ask for the contact again (after the user gave it or refused).

    The same detection as ``asks_for_contact``, reversed: 「号码已收到，店家会联系您」
    passes, 「麻烦再留一下您的手机号」 fails with that phrase as evidence.
    """
    hit = find_contact_request(turn.reply, p.patterns)
    if hit and _NEW_NUMBER.search(normalize(turn.input)):
        return RuleOutcome.passed("the user changes their number", hit)
    if hit:
        return RuleOutcome.failed("asks for the contact again", hit)
    return RuleOutcome.passed("no contact request")


#: the user changes their number (「换了新号，能帮我改一下吗」「my number changed」)
_NEW_NUMBER = re.compile(r"(换了?|改了?|有)(个)?新(的)?(手机)?(号|号码)|(号码|手机号|电话)(换|改)了"
                         r"|换号(了)?|新号"
                         r"|换(个|一个)(新)?(号码|号|手机号)"
                         r"|(改|更新|换)(一下)?(联系方式|号码|手机号)"
                         r"|\b(new|changed) (phone |mobile )?number\b|\bnumber (has )?changed\b",
                         re.IGNORECASE)


#: clauses that open a reply without answering anything: greetings, thanks, address,
#: soothing (「您别着急」「稍等」)
OPENERS = (r"(尊敬的)?(先生|女士|小姐|老板|亲|哥|姐|朋友|家人们?|客户|用户|顾客)?"
           r"(您好|你好|哈喽|hello|hi|嗨)",
           r"尊敬的(先生|女士|客户|用户|顾客)", r"亲+(?!爱)", r"在的", r"在呢", r"在", r"好的",
           r"好嘞", r"好滴", r"好哒", r"嗯+", r"收到", r"ok(ay)?", r"哈+",
           r"(谢谢|感谢)(您|你)?(对我们|对本店)?的?"
           r"((咨询|询问|查询|来信|留言|关注|信任|耐心|支持|选择|光临)[^，,。!?]{0,12})?",
           r"祝(您|你)[^，,。！？!?]{0,12}",
           r"(生活愉快|万事如意|一切顺利|心想事成|工作顺利|身体健康)",
           r"(多谢|唔该)(您|你)?(嘅|的)?((查询|咨询|关注|支持|耐心|信任|光临)[^，,。!?]{0,12})?",
           r"[\u4e00-\u9fff](生|太)",  # 「陈生」「李太」 (Cantonese)
           # the topic restated answers nothing (「车况的话，…」「价格方面」「C1的话」)
           r"(关于|至于)?[\u4e00-\u9fffa-z0-9]{1,8}(的话|方面|这块|这一块)",
           r"(如果|要是)(您|你)?方便((的|嘅)话)?|(您|你)?方便(的|嘅)话",
           r"(为了|为咗).{0,12}(联系|联络|回复|服务|跟进|通知)(您|你)(详细介绍|介绍|沟通|确认|跟进)?",
           r"(请问)?(怎么|如何)称呼(您|你)?", r"(您|你)贵姓", r"(先生|女士|小姐|老板)",
           r"[\u4e00-\u9fff]{1,2}(先生|女士|小姐|老师|总|经理)",
           r"(关于|关於|至于|至於|针对)[^，,。!?]{1,16}(问题|事情|事宜|情况|疑问)",
           r"(预约|到店|报名|信息|客户)?(登记|预约)(表|单|信息)?",
           # popularity answers nothing (「热玛吉是我们这里很受欢迎的项目」「很多客户都会选择」
           # 「最近很多铲屎官都在订」「这台车性价比很高，最近好多人来问」「one of our most popular
           # services」), nor does praise of the question or a welcome (「这个问题问得非常好」
           # 「隐形车衣和镀晶确实是大家最常对比的两个项目」「山野营地欢迎您」)
           r"[^，,。!?]{0,12}(很|非常|特别|最)?(受欢迎|热门|火爆|畅销|抢手)的?(项目|产品|款|课程|车型|服务"
           r"|车)?(之一)?", r"(咨询|问|看)的人(特别|很|非常|超)?多",
           r"(最近)?(很多|好多|不少)[\u4e00-\u9fff]{0,3}都(会)?(选择|喜欢|买|做|在订|在买|在看|问过"
           r"|在问|回购|复购|回头|好评|推荐|点赞)",
           r"(最近)?(很多|好多|不少)[\u4e00-\u9fff]{0,3}(来|在)?(问|咨询|关注)",
           r"[^，,。!?]{0,8}(最近)?(很|非常|特别|超)火(?!车)",
           r"[^，,。!?]{0,8}性价比(很|非常|特别|超)?高", r"[^，,。!?]{0,8}欢迎(您|你)",
           r"[^，,。!?]{0,16}卖得(最|很|特别|超)?(火|好)[^，,。!?]{0,4}",
           r"[^，,。!?]{0,16}(确实|的确)是[^，,。!?]{0,14}(重点|热门|关键|常见|焦点|首选|话题|项目"
           r"|的(部分|方面|问题|地方))(之一)?",  # (not 「变速箱确实是有问题」: an answer)
           r"(如果|要是)(您|你)?(想|需要)(详细|具体|进一步)?了解",
           r"[a-z0-9'’ ]{0,60}(oneof)?ourmostpopular[a-z]{0,20}",
           r"(您|你)?(先)?(别|不要|莫)(着急|急|生气|担心)", r"(请|麻烦)?(您|你)?稍等(一下|片刻)?",
           r"(宝子|宝宝|亲爱的|小可爱|家人们?|宝妈|宝爸|家长|美女|帅哥|小姐姐|小哥哥|老铁|大哥|大姐"
           r"|阿姨|叔叔|同学|小仙女|仙女|小主人?们?)", r"好问题",
           # the question praised as a common one (「会员费这个问题很多人都在问」「带毛孩子出行的
           # 问题小主人们问得超多」「这款问得人超多」)
           r"[^，,。!?]{0,14}问题[^，,。!?]{0,8}(关心|在问|问过|问得(超|很|特别)?多)",
           r"[^，,。!?]{0,8}(问|咨询|看|关注)(的|得)人(也)?(特别|很|非常|超|挺)?多",
           r"(hi|hello|hey)(there)?",
           r"dear(customer|sir|madam)?",
           # 「Thanks for reaching out to Sakura Language School」 (the clause, squashed)
           r"(thanks?|thankyou)(somuch|alot)?(for[a-z0-9'’&.-]{0,60})?",
           r"欢迎(您)?(咨询|光临|来到|关注)[^，,。!?]{0,12}",
           # praising the question answers nothing (「您问的这个问题很关键哦」)
           r"(您|你)?(问的)?(这个)?问题(问得)?(很|非常|特别|真)?(关键|好|专业|重要|到位)",
           r"很多(用户|客户|人|朋友)都(很)?(关心|在问|问过|问)(这个)?(问题)?",
           # 「您是想问总价还能不能谈对吧」 restates the question, it answers nothing
           r"(您|你)(是)?(想|要)?(问|了解|咨询)[^，,。!?？]{0,20}(对吧|是吧|对吗|是吗|吧)")
#: words before a contact request inside its clause that answer nothing
LEAD_INS = (r"麻烦", r"请问", r"请", r"唔该", r"(您|你)(的)?", r"先", r"可以先", r"再", r"这边",
            r"可唔可以", r"可不可以",
            r"您看", r"方便的话", r"一下", r"的话", r"(could|can|would|will)(you|u)", r"please",
            r"pls", r"kindly")


class AnswersFirst(Compiles):
    patterns: tuple[str, ...] = CONTACT_REQUEST
    openers: tuple[str, ...] = OPENERS
    lead_ins: tuple[str, ...] = LEAD_INS


_WORDLESS = re.compile(r"[\W_]+")
_PARTICLES = "啊呀哦哈啦嘛的了呢吧噢哒㗎喎嘅囉咩喇噃"
_SENTENCE_GAP = re.compile(r"[。！？!?；;\n]")


@functools.lru_cache(maxsize=64)
def _opening(patterns: tuple[str, ...]) -> re.Pattern[str] | None:
    """A run of openers, each with its particles (「您好呀感谢您关注诚信二手车」,
    「亲亲在的在的」)."""
    one = compile_any(patterns)
    if one is None:
        return None
    return re.compile(f"(?:(?:{one.pattern})[呀啊哦呢吧啦嘛哈的哒滴喔唷噢哟喇]*)+", re.IGNORECASE)


def _blank_asks(text: str, blank: re.Match[str]) -> str:
    """A form's blank for the contact as words that ask for it: 「请输入您的手机号码：____」
    keeps its own words, a bare 「- 手机号：____」 reads 「留手机号」."""
    head = text[text.rfind("\n", 0, blank.start()) + 1:blank.start()]
    return ("" if _WORDLESS.sub("", head) else "留") + blank.group(1) + "\n"


@rule("answers_before_asking", params=AnswersFirst)
def answers_before_asking(p: AnswersFirst, turn: TurnView) -> RuleOutcome:
    """A reply that asks for the contact answers something first.

    The text before the first contact request must hold more than ``openers``
    (greetings, thanks, 「如果方便的话」「为了方便店家联系您」「怎么称呼您」)
    and ``lead_ins`` (「麻烦」「请」「先」): 「标价8.98万，留个手机号…」 passes;
    「您好！方便留个电话吗？」 and 「好的！为了方便联系您，麻烦留个手机号。」 fail, and so does one
    whose words before the request are one sentence back on an earlier question (「补充下您
    之前问的过户情况：0次过户。您留个手机号…」「As I mentioned, it's HK$2,400 a month.」) while
    the user's message asks another.
    A reply that asks for nothing passes.
    """
    regex = compile_any(p.patterns)
    opener = _opening(p.openers)
    lead_in = compile_any(p.lead_ins)
    before: list[str] = []
    text = normalize(LABEL.sub("", turn.reply))  # 「【温馨提示】」 answers nothing
    # a form: its blank for the contact asks for it, its other fields answer nothing
    text = _BLANK.sub(lambda m: _blank_asks(text, m), text)
    text = _EMPTY_FIELD.sub(lambda m: _blank_asks(text, m), text)
    for table in (_JSON_BLANK, _TABLE_BLANK):  # a template's or a table's: asks it
        text = table.sub(lambda m: f"\n留{m.group(1)}\n", text)
    text = _FORM.sub("\n", _FIELD.sub("\n", text))
    # the question said back, over its commas (「您是想了解从浦东搬到徐汇、两室一厅的搬家费用
    # 对吧？」), answers nothing
    text = _RESTATED.sub("", text)
    for clause in clauses(text):
        hit = unnegated(regex, clause) if regex else None
        if hit is None:
            before.append(clause)
            continue
        said = [c for c in before if (words := _WORDLESS.sub("", c))  # not 「-」 or an emoji
                and not (opener and opener.fullmatch(words.lower()))
                and not _FILL_IN.fullmatch(words)]
        head = _WORDLESS.sub("", clause[:hit.start()])
        while opener is not None and (m := opener.match(head)) and m.end():
            head = head[m.end():]  # 「OK～ 麻烦留个…」: an opener without punctuation
        if lead_in is not None:
            head = lead_in.sub("", head)
        if said and (earlier := _earlier_only(text, said, turn.input,
                                              text.find(clause) + hit.start())):
            return RuleOutcome.failed("answers only an earlier question before asking for the "
                                      "contact", earlier)
        if said or len(head) >= 2:
            return RuleOutcome.passed("answers before asking for the contact",
                                      "，".join([*said, head]) if said else head)
        return RuleOutcome.failed("asks for the contact before answering", hit.group(0))
    return RuleOutcome.passed("no contact request")


#: the user's question said back as a question, to its end (「您是想了解…费用对吧？」)
_RESTATED = re.compile(r"(您|你)(是)?(想|要)?(问|了解|咨询)[^。！？!?\n]{0,40}?"
                       r"(对吧|是吧|对吗|是吗)[~～啊呀]*(?=[。！？!?\n]|$)")
#: the same in English: an earlier answer repeated (「As I mentioned, it's HK$2,400 a month」)
_EARLIER_EN = re.compile(r"\bas i (mentioned|said|explained)( earlier| before| above)?\b",
                         re.IGNORECASE)
#: a reply that turns back to an earlier question (「补充下您最早问的过户情况：」「回到您之前
#: 问的油耗」), and what that question was about
_EARLIER = re.compile(r"(补充|回到|回复|回答|再说|顺便说|接着说)(一)?下?[^，,。！？!?：:]{0,3}"
                      r"(最早|最开始|一开始|之前|刚才|前面|上次|早前)(问|提|说)(的|到的|过的)"
                      r"([^，,。！？!?：:\s]{0,8})")
_TOPIC_END = re.compile(r"(情况|问题|事情|事|那个|这个|方面)$")


def _earlier_only(text: str, said: list[str], user_input: str, ask_at: int) -> str | None:
    """The words before a contact request (at ``ask_at``) when all of them are one sentence
    answering an earlier question (「补充下您最早问的过户情况：这台是0次过户，一手车。您留个
    手机号…」「As I mentioned, it's HK$2,400 a month. Leave your number…」) while the user's
    message asks something else (「店在哪个区啊？」), else None."""
    until = text.find(said[0]) + len(said[0])
    m = _EARLIER.search(text, 0, until) or _EARLIER_EN.search(text, 0, until)
    if m is None or not any(asked(user_input)):
        return None
    topic = _TOPIC_END.sub("", m.group(6)) if m.re is _EARLIER else ""
    if len(topic) >= 2 and topic in normalize(user_input):  # the same question asked again
        return None
    end = _SENTENCE_GAP.search(text, m.end()) or _EN_STOP.search(text, m.end())
    stop = end.start() if end else len(text)
    if stop <= ask_at and len(_WORDLESS.sub("", text[stop:ask_at])) < 2 and all(
            m.start() <= text.find(c) < stop for c in said if c not in m.group(0)):
        return text[m.start():stop]
    return None


#: where an English sentence ends (「…for 4 lessons. Leave your number」)
_EN_STOP = re.compile(r"\.(?=\s)")


class ChannelNotOffered(Compiles):
    channels: tuple[str, ...] = ("微信", "vx", "加V", "wx", "QQ", "企业微信", "绿泡泡")
    unless_user_mentions: bool = True


@rule("channel_not_offered", params=ChannelNotOffered)
def channel_not_offered(p: ChannelNotOffered, turn: TurnView) -> RuleOutcome:
    """The reply does not propose one of ``channels`` (case-insensitive).

    A channel after a negation (「不方便加微信」「暂不支持微信」) or refused right
    after (「加微信不方便」) is not an offer, nor is one mentioned before the sentence refuses
    it (「很多客户想加微信聊，不过加微信不太方便」).
    With ``unless_user_mentions`` the rule is not applicable when the user
    named one of the channels in this turn or earlier.
    """
    regex = compile_any(p.channels)
    assert regex is not None
    if p.unless_user_mentions and regex.search(normalize(_user_text(turn))):
        return RuleOutcome.not_applicable("the user mentioned the channel")
    text = normalize(turn.reply)
    found = list(regex.finditer(text))
    refused = [negated(text, m.start()) or bool(_REFUSED_AFTER.match(text, m.end()))
               for m in found]
    for k, m in enumerate(found):
        # refused later in its sentence: 「很多客户想加微信聊，不过加微信不太方便」
        later = any(refused[j] and not _SENTENCE_GAP.search(text, m.end(), found[j].start())
                    for j in range(k + 1, len(found)))
        if not refused[k] and not later and not _NOT_A_CHANNEL.match(text, m.end()):
            start = max(0, m.start() - 6)
            return RuleOutcome.failed(f"offers the channel {m.group(0)!r}",
                                      text[start:m.end() + 6])
    return RuleOutcome.passed("no channel offered")


class NoCommitment(Compiles):
    topics: dict[str, tuple[str, ...]] = Field(default_factory=lambda: dict(TOPICS))
    commit_patterns: tuple[str, ...] = COMMIT
    safe_patterns: tuple[str, ...] = SAFE
    #: availability and slot statements: a promise unless the clause asks or supposes
    offer_patterns: tuple[str, ...] = OFFER
    suppose_patterns: tuple[str, ...] = SUPPOSE


@rule("no_commitment", params=NoCommitment)
def no_commitment(p: NoCommitment, turn: TurnView) -> RuleOutcome:
    """The reply makes no promise on real-time topics (price, stock, condition, slots).

    A clause fails when it names a topic *and* a commitment
    (「最低给您8.5万」「保证这个价」「现车一定有」), unless the same clause is
    safe: a hand-off or a disclaimer (「以店家核算为准」「无法保证」). A commitment
    that ends its clause (「…，这个我可以跟您保证」「您放心，…」, or leaves only a verb:
    「…您俩来正好凑满，铁定开」) takes its topic from the
    clauses on either side, and its excuse from those of them in its own sentence that
    disclaim that topic or name no subject of their own (「价格您放心，以店家核算为准」; not
    「这个价不会变，至于师傅几点到要以派单系统为准」); a neighbour that disclaims its own
    topic, or where the bot goes to find out or passes the request on, lends none
    (「您放心！最终成交价以店家核算为准」「派送时间的事您放心。我已经帮您把“上午派送”的需求
    报给网点了」). A disclaimer the clause turns from (「虽说以鉴定报告为准但我敢保证…」) excuses
    nothing. A negated commitment, or one inside a quotation (「您要的“保证没有事故”这句话我不能
    说」), is none. A statement of availability or of a slot is a commitment too
    (「有现车，随时来看」「明天下午可以试驾」) unless its clause asks or supposes
    (「您明天能来吗」「明天能来的话…」). A commitment followed by 什么 or 多少 asks
    (「至于能给到什么价格…」). A bare assent that opens the reply (「可以的，没问题」
    「能。」)
    promises on the topic of the user's question, unless the reply names someone else
    to decide it or disclaims it (not another matter: 「可以的！至于最后的结算费用，要等设计师
    出完预算才知道」 promises the date asked about). The evidence is the clause and the
    topic it promised on.
    """
    commit, safe = compile_any(p.commit_patterns), compile_any(p.safe_patterns)
    offer, suppose = compile_any(p.offer_patterns), compile_any(p.suppose_patterns)
    disclaimer = compile_any(DISCLAIMER)
    topics = {name: compile_any(pats) for name, pats in p.topics.items()}
    # a promise of the staff's relayed as theirs (「值班经理刚说了“今晚那场给您预留两个情侣座”」)
    # is said: its quotation marks name the speaker, they do not set it apart
    norm = _RELAYED.sub(r"\g<said>\g<words>", normalize(turn.reply))
    user = normalize(turn.input)
    spans = clause_spans(norm)
    parts, asks = [norm[a:b] for a, b in spans], asked(turn.reply)
    # the sentence of each clause: an excuse counts in its own sentence only (「利息以店家核算
    # 为准。车价您不用担心」 excuses nothing about the price)
    sentence = [0] * len(spans)
    for i in range(1, len(spans)):
        gap = norm[spans[i - 1][1]:spans[i][0]]
        sentence[i] = sentence[i - 1] + bool(_SENTENCE_GAP.search(gap))
    # a sentence that opens citing a published policy (「按我们官网公布的价保政策：…差价退给
    # 您」) states the policy, it promises nothing of the bot's own
    policy = {sentence[i] for i, clause in enumerate(parts)
              if ((i == 0 or sentence[i - 1] != sentence[i]) and _POLICY.search(clause))
              or _POLICY_NAMED.search(clause)}
    for i, clause in enumerate(parts):
        if sentence[i] in policy:
            continue
        joined = i > 0 and sentence[i - 1] == sentence[i]
        for c, offered in _candidates(parts, i, asks[i], commit, offer, suppose, joined):
            if offered and c.group(0) in user and not _ASKING.search(user):
                continue  # the user's own plan said back (「好的，周六上午看车。」), not answered
            if not offered and _OPEN_QUESTION.match(clause, c.end()):
                continue  # 「至于能给到什么价格…店长会联系您」 asks, it grants nothing
            excuse = disclaimer if c.group(0) in STRONG else safe
            # a disclaimer the clause turns from (「虽说以鉴定报告为准但我敢保证…」) excuses
            # nothing; the next clause may refuse it (「至于一定不生病，我没法向您保证」)
            if _excuses(excuse, clause, _turned(clause, c.start())) or _refused(
                    parts, sentence, i, topics):
                continue
            # a commitment that ends its clause covers its neighbours: 「您放心，这台车没有
            # 事故」, 「一点毛病都没有，这个我可以跟您保证」「no 泡水 no 火烧，guaranteed！」, and
            # so does one with a verb alone after it (「…，您俩来正好凑满，铁定开」)
            bare = len(_WORDLESS.sub("", clause[c.end():]).strip(_PARTICLES)) <= 2
            near = (range(max(0, i - 1), min(len(parts), i + 2))
                    if bare and not _BARE_ASSENT.match(c.group(0)) else range(i, i + 1))
            scope = "，".join(parts[j] for j in near)
            if (name := _promised(topics, excuse, parts, sentence, i, near)) is not None:
                return RuleOutcome.failed(f"promises on {name}: {c.group(0)!r}", scope)
            if any(_excuses(excuse, parts[j]) for j in near if sentence[j] == sentence[i]):
                continue
            if offered:  # an availability or slot statement is its own topic
                return RuleOutcome.failed(f"promises availability: {c.group(0)!r}", scope)
            # a bare 「没问题」 that opens the answer takes its topic from the question
            # (「那8.5万能开走吗？」「可以的，没问题」), where no one else is to decide
            if (bare and _opens(parts, i)
                    and (asked_about := _question(turn.input, parts, topics)) is not None):
                question, name = asked_about
                return RuleOutcome.failed(
                    f"promises on {name}: {c.group(0)!r} to 「{question}」", clause)
    return RuleOutcome.passed("no promise on a real-time topic")


def _candidates(parts: list[str], i: int, asks: bool, commit: re.Pattern[str] | None,
                offer: re.Pattern[str] | None, suppose: re.Pattern[str] | None,
                joined: bool = True) -> list[tuple[re.Match[str], bool]]:
    """Clause ``i``'s first commitment said (not negated, not inside a quotation: 「您要的
    “保证没有事故”这句话我不能说」 quotes one), then its first statement of availability
    (``True``) unless it asks or supposes: a commitment on no topic (「木问题哒～」) does not
    hide 「已经帮您锁定这台车啦」."""
    clause, out = parts[i], []
    # what follows a supposition of the user's act is said (「今天送来的话明天就能洗好」)
    head, _, tail = clause.rpartition("的话")
    said = tail if head and _USER_ACTS.search(head + "的话") else clause
    # 「如果到时候车还没售出，您周末过来就能看到」: the supposition may open the sentence
    # (``joined``: clause ``i - 1`` is in it; 「…是否可约以前台为准。P.S. …已经给你们锁好了」)
    supposed = (suppose is not None and (
        suppose.search(said)
        or (joined and suppose.search(parts[i - 1]) and not _USER_ACTS.search(parts[i - 1])))
        ) or bool(_EMBEDDED.search(clause))
    # a claim that vouches (「没有任何问题」) is supposed, not said, after 如果; the user's own
    # word reported (「您说周六一定过来，这个我记下了」) is theirs
    if commit is not None and (c := unnegated(commit, clause)) and not (
            supposed and c.group(0).startswith("没有任何")) and not _USER_SAID.search(
            clause, 0, c.start()) and not _EMBEDDED.search(c.group(0)) and not clause.startswith(
            "的话", c.end()):  # (「信息没问题的话我就登记了」: the commitment word supposed)
        # (「价格能不能锁定要由店长来定」 asks it, inside the commitment's words)
        out.append((c, False))
    if (offer is not None and not asks and not supposed and not _RELAYS.search(clause)
            and not _STANDING.search(clause) and (o := unnegated(offer, clause))
            and not _NOT_MEAN.match(clause, o.end())  # 「页面显示有货不代表…」
            # a source named for it, here or in the clause before (「检测报告显示没有泡过水」),
            # a typical duration (「一般半小时到1小时就能做完」), a request registered (「您的试听
            # 申请我已经给您确定好了」)
            and not _SOURCED.search(clause, 0, o.start())
            and not (i > 0 and _SOURCED.search(parts[i - 1]))
            and not _TYPICAL.search(clause, 0, o.start())
            and not _REQUEST_OF.search(clause, 0, o.start())):
        out.append((o, True))
    return out


def _promised(topics: dict[str, re.Pattern[str] | None], excuse: re.Pattern[str] | None,
              parts: list[str], sentence: list[int], i: int, near: range) -> str | None:
    """The topic clause ``i``'s commitment promises on, from the clauses ``near`` it, that
    no excuse covers: a clause that names the topic and disclaims it (「您放心！最终成交价以
    店家核算为准」), or a neighbour in the commitment's sentence that disclaims that topic or
    no subject of its own (「价格您放心，以店家核算为准」; not 「…这个价不会变，至于师傅几点到
    要以派单系统为准」, nor 「阿姨的具体人选以调度安排为准」)."""
    # a turn (「车况以第三方检测报告为准哈，不过说实话这台车我敢拍胸脯」) leaves the disclaimers
    # before it behind
    turned = max((j for j in range(near.start, i + 1) if _BUT.match(parts[j])), default=0)
    covering = [parts[k] for k in near
                if k != i and k >= turned and sentence[k] == sentence[i]]
    for j in near:
        if j != i and (_excuses(excuse, parts[j]) or _DEFERS.search(parts[j])
                       or _RELAYS.search(parts[j])):
            continue  # the topic's own clause disclaims it, the bot goes to find out or relays
        for name in _topics(topics, parts[j]):
            if not any(_covers(topics, excuse, text, name) for text in covering):
                return name
    return None


def _own_excuse(excuse: re.Pattern[str] | None, text: str, start: int = 0
                ) -> re.Match[str] | None:
    """The first excuse of the bot's own in ``text`` (from ``start``), not one of others
    (「别家无法保证的我们都敢保证」)."""
    if excuse is None:
        return None
    return next((m for m in excuse.finditer(text, start)
                 if not _OTHERS.search(text, max(0, m.start() - 4), m.start())), None)


def _excuses(excuse: re.Pattern[str] | None, clause: str, start: int = 0) -> bool:
    """``clause`` (from ``start``) holds an excuse of the bot's own (:func:`_own_excuse`)."""
    return _own_excuse(excuse, clause, start) is not None


#: who else disclaims (「别家无法保证」「同行不敢承诺」)
_OTHERS = re.compile(r"别家|别人|人家|同行|其他(家|店)|他们")


def _covers(topics: dict[str, re.Pattern[str] | None], excuse: re.Pattern[str] | None,
            text: str, name: str) -> bool:
    """``text`` disclaims topic ``name``: it names it, or names no subject before the excuse."""
    m = _own_excuse(excuse, text)
    if m is None:
        return False
    named = _topics(topics, text)
    return name in named if named else len(_WORDLESS.sub("", text[:m.start()])) <= 4


def _topics(topics: dict[str, re.Pattern[str] | None], text: str) -> list[str]:
    """The real-time topics ``text`` names."""
    return [name for name, regex in topics.items() if regex is not None and regex.search(text)]


_RELAYS = re.compile(_RELAY)
#: a turn away from what was said before (「虽说以鉴定报告为准但…」)
_BUT = re.compile(r"但是?|不过|可是|然而|\bbut\b")


def _turned(clause: str, at: int) -> int:
    """Where the part of ``clause`` holding position ``at`` starts: after its last turn."""
    start = 0
    for m in _BUT.finditer(clause, 0, at):
        start = m.end()
    return start


def _topic(topics: dict[str, re.Pattern[str] | None], text: str) -> str | None:
    """The first real-time topic ``text`` names."""
    return next(iter(_topics(topics, text)), None)


#: what follows a commitment that asks instead (「能给到什么价格」「能便宜多少」)
_OPEN_QUESTION = re.compile(r"[^，,。！？!?]{0,4}(什么|多少|几(?!乎|天内)|哪)")
#: the bot goes to find out (「没问题，我帮您问一下」): its assent answers nothing yet
_DEFERS = re.compile(r"(问|查|确认|核实|了解)(一下|一问|问|查|清楚)|帮(您|你)(问|查|确认|核实)"
                     r"|稍等|等我|(去|再)(问|查|确认|核实|了解)|问到了|(转告|转达|转交|反馈给)"
                     r"|登记(下来|一下)"
                     r"|\b(let me|i'll|i will)\s+(check|ask|find out|confirm)\b")
#: a user's message that asks (a question mark, a particle, or 能/可以/会不会)
_ASKING = re.compile(r"[?？]|[吗么嘛][~～啊呀]*$|能不能|可不可以|会不会|能|可以")


#: a clause that refuses to promise what the clause before said (「…，我没法向您保证」)
_REFUSED = re.compile(r"[^，,。！？!?]{0,6}(没法|无法|不能|不敢|没办法|不可能)[^，,。！？!?]{0,6}"
                      r"(保证|承诺|打包票)(什么|哈|哦|呢|的|啊|呀|了|这个|这点)*$")


def _refused(parts: list[str], sentence: list[int], i: int,
             topics: dict[str, re.Pattern[str] | None]) -> bool:
    """A clause after clause ``i`` in its sentence (one of the next three: 「至于一定不生病、不
    掉秤，我没法向您保证」) refuses to promise and names no topic of its own: what clause ``i``
    says is what is not promised."""
    return any(sentence[j] == sentence[i] and _REFUSED.match(parts[j]) is not None
               and _topic(topics, parts[j]) is None
               for j in range(i + 1, min(len(parts), i + 4)))


def _opens(parts: list[str], i: int) -> bool:
    """Clause ``i`` opens the reply: only short acknowledgements (「可以的」「好」) before it."""
    return all(len(_WORDLESS.sub("", p)) <= 4 for p in parts[:i])


def _question(text: str, parts: list[str], topics: dict[str, re.Pattern[str] | None]
              ) -> tuple[str, str] | None:
    """The user's message and its topic, when it asks about one and the reply (its clauses
    ``parts``) names no one else to decide it (no party, no disclaimer, no going to find out,
    but about another topic: 「可以的！至于最后的结算费用，要等设计师出完预算才知道」 leaves the
    date asked about promised): then the reply's assent answers it."""
    norm = normalize(text)
    if not _ASKING.search(norm) or (name := _topic(topics, norm)) is None:
        return None
    safe = compile_any(SAFE)
    for k, clause in enumerate(parts):
        # someone else to decide: a party who acts (「要维修师傅检测后才能告诉您」), not one named
        # for the way there (「到咗门口打俾前台就得」)
        if not (find_party_action(clause, PARTIES, PARTY_ACTIONS)
                or any(regex is not None and regex.search(clause) for regex in (safe, _DEFERS))):
            continue
        # 「至于最后酒水怎么算，得看您当天点什么，到时候以收银为准」: about another matter
        switch = next((j for j in range(k, max(-1, k - 4), -1) if _SWITCH.match(parts[j])), None)
        named = _topics(topics, "，".join(parts[switch if switch is not None else k:k + 1]))
        if k > 0 and _EMBEDDED.search(parts[k - 1]):  # 「周六能不能修好，要师傅检测后才能告诉您」
            named += _topics(topics, parts[k - 1])
        if name in named or not (named or switch is not None):
            return None
    return norm, name


_BARE_ASSENT = re.compile(_ASSENT)
#: a supposition of what the user does (「今天送来的话」「您现在下单的话」): the clause after it
#: still promises what then happens
_USER_ACTS = re.compile(r"(送来|拿来|送过来|下单|付款|付定金|签约|签合同|报名)(的话)?$")
#: a clause that names what it says as the business's published rule or standard (「这条写在
#: 售后条款里」「这是我们的统一标准」「店铺公开的规则是…」「这是店里公开承诺的正品凭证」): its
#: sentence states policy
_POLICY_NAMED = re.compile(r"(写在|写进|载明|列在|规定在)[^，,。！？!?]{0,8}"
                           r"(条款|合同|政策|规定|协议|规则)"
                           r"|这是(我们|店里|本店|公司|店铺)?的?(统一|固定)?(标准|规定|流程|规范|政策|做法)"
                           r"|(公开|公布|公示)的?(规则|政策|规定|承诺)"
                           r"|\b(under|per|according to|as per) (our|the) "
                           r"(published |posted |public )?(store |opening |business )?"
                           r"(booking |refund |price )?"
                           r"(policy|policies|terms|rules|hours|schedule)\b"
                           r"|\bour (published|posted|public) [a-z ]{0,20}"
                           r"(policy|policies|terms)\b"
                           # 「a 90-day workmanship guarantee, as set out in our service terms」
                           r"|\bas (set out|stated|described|written|laid out) in (our|the) "
                           r"[a-z ]{0,20}(terms|policy|policies|warranty|agreement|contract)\b",
                           re.IGNORECASE)
#: a source named for what follows (「根据检测报告」「页面目前显示…」「档案上写着」)
_SOURCED = re.compile(r"根据[^，,。！？!?]{0,6}(检测报告|报告|档案|记录|资料)"
                      r"|(页面|系统|网上|报告|档案|记录|资料)(上)?(目前)?(显示|写着|写的是)")
_TYPICAL = re.compile(r"一般|通常|正常(情况下)?|大概|大约|平均|\b(typically|usually|normally)\b",
                      re.IGNORECASE)
_REQUEST_OF = re.compile(r"(申请|需求|请求|资料|信息)[^，,。！？!?]{0,8}$")
#: what a statement does not mean (「页面显示有货不代表门店现在一定有」)
_NOT_MEAN = re.compile(r"[^，,。！？!?]{0,8}(不代表|不等于|不意味|并不)")
#: the business's hours or its weekly round, a standing policy (「营业时间内随时都可以来店试驾」
#: 「我们每周二、周五统一发货」), not a slot
_STANDING = re.compile(r"(营业|开放)时间[^，,。！？!?]{0,16}?(内|之内|里)|每(周|天|日|月|晚|个月)"
                       r"|统一(发货|送货|配送|上门|安排)"
                       r"|\bduring (business|opening) hours\b|\bevery (day|week|monday|tuesday"
                       r"|wednesday|thursday|friday|saturday|sunday)\b", re.IGNORECASE)
_RELAYED = re.compile(r"(?P<said>(经理|店长|院长|师傅|老板|同事|销售|主管|厂家|老师|医生|负责人"
                      r"|前台)"
                      r"[^，,。！？!?“”「」\"]{0,6}(说了|说|讲|答应|表示|承诺)(了|过)?[:：,，]?\s*)"
                      r"[“「\"](?P<words>[^”」\"]{1,60})[”」\"]")
#: the user's words reported before a commitment word (「您说周六一定过来」)
_USER_SAID = re.compile(r"(您|你)(刚才|刚刚|之前|前面)?(说|讲|提到|表示)(过|了)?(?!的)"
                        r"[^，,。！？!?]{0,10}$")
#: a published policy cited (「按我们官网公布的价保政策」「这个您可以参考官网公布的价保政策」)
_POLICY = re.compile(r"(按|按照|根据|依据|参考|参照|依照)[^，,。！？!?]{0,8}"
                     r"(官网|公布|公示|平台|合同|协议)[^，,。！？!?]{0,8}"
                     r"(政策|规定|规则|条款|细则|协议|公告)")
#: a question the party's clause decides (「周六能不能修好，…」)
_EMBEDDED = re.compile(r"能不能|是不是|有没有|可不可以|会不会|行不行|够不够|来不来得及"
                       # 「这周哪天能上门要看阿姨的排班」, not 「哪天都行」
                       r"|(哪天|什么时候|几点|哪个|哪些|哪家|哪台|哪间|哪位|哪一(个|天|场|台))"
                       r"(?![^，,。！？!?]{0,6}(都|也))")
#: a clause that turns to another topic (「至于最后的结算费用，…」)
_SWITCH = re.compile(r"(至于|关于|另外|而(?!且))")


class StatesValue(Compiles):
    parties: tuple[str, ...] = PARTIES
    actions: tuple[str, ...] = PARTY_ACTIONS
    items: tuple[str, ...] = ("最新(报价|价格)", "优惠", "车况报告", "检测报告",
                              "具体(年份|配置|信息|价格)", "看车时间", "底价", "实车视频",
                              "实拍", "报价单", "详细(资料|信息)", "第一时间", "回电",
                              "降价通知", "(首付|月供|分期|贷款|金融|置换|保险)(方案|政策)",
                              "(准确|精准|最终|实际)的?(报价|价格|费用|方案)",
                              # 「会将最新盘源同叫价短讯俾你」「a free in-home estimate」
                              "最新(盘源|房源|楼盘|资料|排期|课表)",
                              r"(短讯|短信|讯息|简讯)(俾|畀|给)(你|您)",
                              r"\bfree (in-home |on-site |home )?(estimate|quote|consultation"
                              r"|assessment|trial|inspection|check-?up|trial lesson|sample)\b",
                              # 「a designer will come measure your kitchen and send you…」
                              r"\b(a|an|one of our)\s+[a-z]+\s+will\s+(come|call|send|text|email"
                              r"|visit|measure|contact)\b",
                              # something sent to the user (「我把最新课表发给您」), a notice
                              # (「我哋会SMS通知你」)
                              r"(把|将)[^，,。！？!?]{1,14}(发送|发|传|寄)(给|到)?(您|你)",
                              # 「半個鐘內打俾你報價」
                              r"(给|俾|畀)(您|你)(报价|估价|回复|答复)",
                              r"(方案|报价|资料|清单|图纸|设计|样稿|样图|课表|菜单|价目表|照片"
                              r"|视频)[^，,。！？!?]{0,6}(发|传|寄)(给|到)(您|你)",
                              r"(会|将)[^，,。！？!?]{0,6}通知(您|你)",
                              "免费[^，,。！？!?]{0,4}(估价|报价|量房|测量|设计|试听|试学|试课|体验|"
                              "检测|验光|评估|勘测|勘察)",
                              "(书面|正式|详细)的?(报价|方案)",
                              # 「留下手机号后您将获得：…」
                              "(您|你)(将|会|就能|就可以)(获得|得到|领取|收到|享受)",
                              "(发|推送)[^，,。]{0,6}(提醒|通知)",
                              # a result sent to the user (「审核结果我们会短信发给您」), not
                              # one that decides first (「具体要看检测结果」)
                              "(审核|检测|评估|核算|查询|处理|办理|诊断)结果[^，,。]{0,8}"
                              "(发|告诉|通知|短信|回复|告知)",
                              "(发|告诉|通知|短信|回复|告知)[^，,。]{0,8}"
                              "(审核|检测|评估|核算|查询|处理|办理|诊断)结果",
                              # 「we'll text you the e-ticket」「the locksmith will call you」
                              r"\b(our(\s+[a-z]+){1,2}|we|the(\s+[a-z]+){1,2})\s+can\s+"
                              r"(arrange|book|call|text|"
                              r"email|send)\b",
                              r"\b(we|our(\s+[a-z]+){1,3}|the(\s+[a-z]+){1,3})\s*(will|'ll|’ll)"
                              r"\s+(call|text|"
                              r"email|message|send|contact|get back to)\s+you",
                              # 「给您一个初步的置换价参考」
                              r"给(您|你)(一个|个)?[^，,。！？!?]{0,8}(参考|估价|报价|方案|建议)",
                              # 「Our skipper texts a sea-conditions update」
                              r"\b(our|the)(\s+[a-z]+){1,3}\s+(texts|calls|emails|sends)\s+"
                              r"(you|a|an|the|your)\b",
                              # 「you'll get the floor plan by SMS」
                              r"\byou('ll|’ll| will) (get|receive)\b",
                              # 「our front desk will hold a room for you」
                              r"\b(we|our(\s+[a-z]+){1,2}|the(\s+[a-z]+){1,2})\s*(will|'ll|’ll)"
                              r"\s+(hold|reserve|book|keep|save)\s+(a|an|the|your|it)\b")


@rule("states_value", params=StatesValue)
def states_value(p: StatesValue, turn: TurnView) -> RuleOutcome:
    """The reply says what the user gets by leaving contact.

    Passes on a concrete ``items`` term (「具体年份」「最新报价」) or a
    party + action (「店家核算后告诉您」); a bare 「确认」 states nothing, nor does
    a disclaimer (「价格以店家核算为准」).
    """
    items = compile_any(p.items)
    # a clause that disclaims (「价格以店家核算为准」「这个优惠幅度我说了不算」) is not what
    # the user gets: neither its item nor its party counts
    text = _PRECONDITION.sub("，", _DISCLAIMED.sub("，", normalize(turn.reply)))
    # what the user fetches alone (「最新报价表可以在我们官网下载」) is not what the number brings
    text = _SELF_SERVED.sub("，", text)
    item = unnegated(items, text) if items else None  # 「目前没有优惠」 offers nothing
    if item is not None:
        return RuleOutcome.passed("states a concrete item", item.group(0))
    hit = find_party_action(text, p.parties, p.actions)
    if hit:
        return RuleOutcome.passed("states who does what", hit)
    return RuleOutcome.failed("does not say what leaving contact brings", turn.reply)


#: where a clause starts (after a stop, a comma, a line break, or at the text's start): a
#: pattern that takes a whole clause (``[^，…]*`` first) is tried there alone, which finds
#: what a search from every position would (a match from inside a clause is one from its
#: start, found first) at a sixth of the cost on a long reply
_CLAUSE_START = r"(?<![^，,。！？!?；;\n])"
_SELF_SERVED = re.compile(_CLAUSE_START + r"[^，,。！？!?；;\n]*(可以|可)?(在|去|到|上)"
                          r"(我们|我哋)?的?(官网|网站|公众号|小程序|app|门户)[^，,。！？!?；;\n]{0,4}"
                          r"(下载|查看|查询|看到|自助)[^，,。！？!?；;\n]*", re.IGNORECASE)
_DISCLAIMED = re.compile(_CLAUSE_START + r"[^，,。！？!?；;\n]*(以[^，,。！？!?；;]{0,8}为准"
                         r"|说了不算|做不了主|定不了|不确定|不清楚)[^，,。！？!?；;\n]*")
#: a clause that ends in what must be settled first (「分期方案需要店家确认哈」「得医生拍片后
#: 才能定」) says what is missing, not what leaving the number brings
_PRECONDITION = re.compile(r"(?<![^，,。！？!?；;\n~～])"  # (and after its own end, a ～)
                           r"[^，,。！？!?；;\n]*(需要|得|要)[^，,。！？!?；;\n]{0,8}"
                           r"(确认|核实|核算|来定|才能定)[哈哦呢的啦]*([~～]|(?=[，,。！？!?；;\n]|$))")


class Order(Compiles):
    first: tuple[str, ...] = Field(min_length=1)
    then: tuple[str, ...] = ()
    #: a request for the user's contact, recognised as ``asks_for_contact`` does (with
    #: ``contact_patterns``), is a ``then`` move too: one definition of "asks for the
    #: contact" for every rule, not a weaker copy in the ledger
    contact_request: bool = False
    contact_patterns: tuple[str, ...] = CONTACT_REQUEST
    restating: tuple[str, ...] = ("对于", "关于", "您说的", "您提到的", "您反映的", "说好的",
                                  "您遇到的")

    @model_validator(mode="after")
    def _has_moves(self) -> Order:
        if not self.then and not self.contact_request:
            raise ValueError("no move to order: give 'then' phrases, or 'contact_request: "
                             "true', or both")
        return self


def _some(words: tuple[str, ...], shown: int = 4) -> str:
    """A vocabulary as a failure names it: all of a short one, the first few of a long one
    (「['抱歉', '报歉', '对不起', '对不住', … 17 more]」)."""
    if len(words) <= shown + 1:
        return str(list(words))
    return str(list(words[:shown]))[:-1] + f", … {len(words) - shown} more]"


class Move(NamedTuple):
    """A ``then`` move of a reply: where it is in the normalised text, and what it says."""

    start: int
    end: int
    phrase: str


def _restates(text: str, start: int, end: int, user: str,
              markers: re.Pattern[str] | None) -> bool:
    """The phrase repeats the user's complaint (「您说的试驾预约没人跟进」), no new move."""
    if text[start:end] in user:
        return True
    return markers is not None and bool(markers.search(text[max(0, start - 8):start]))


def first_move(p: Order, turn: TurnView, text: str) -> Move | None:
    """The first ``then`` phrase (or contact request) of ``text`` that is a move: not after
    a negation (「不会再给您推荐了」), not the user's own words, not right after a
    ``restating`` marker."""
    then = compile_any(p.then)
    spans = [(m.start(), m.end()) for m in then.finditer(text)
             if not negated(text, m.start())] if then is not None else []
    if p.contact_request:
        spans += contact_requests(text, p.contact_patterns)
    user, markers = normalize(_user_text(turn)), compile_any(p.restating)
    return next((Move(a, b, text[a:b]) for a, b in sorted(spans)
                 if not _restates(text, a, b, user, markers)), None)


@rule("order", params=Order)
def order(p: Order, turn: TurnView) -> RuleOutcome:
    """A ``first`` phrase appears before any ``then`` phrase (an apology before the lead move).

    A ``then`` phrase after a negation (「不会再给您推荐了」), repeating the user's
    own words, or right after a ``restating`` marker (「对于您到店看车遇到的问题」)
    is not a move. With ``contact_request: true`` a request for the user's contact, as
    ``asks_for_contact`` recognises it (「怎么联系您」「leave your phone number」), is a
    move too. Not applicable when no move appears; failed when one appears with no
    ``first`` phrase before it.
    """
    text = normalize(turn.reply)
    first = compile_any(p.first)
    assert first is not None
    t = first_move(p, turn, text)
    if t is None:
        return RuleOutcome.not_applicable("no 'then' phrase in the reply")
    f = _first(first, text)
    if f is None or f.start() > t.start:
        return RuleOutcome.failed(f"{t.phrase!r} comes before any of {_some(p.first)}",
                                  text[: t.end])
    return RuleOutcome.passed("in order", text[f.start(): t.end])


#: an e-mail or a messenger asked for: after the user ended or refused, as much a contact
#: request as a phone (「您也可以在这个链接填写邮箱」「Just reply with your email」「加個WhatsApp」)
OTHER_CHANNELS = (r"(留|填写?|提供|告诉|发|回复)(一?下|个|一个)?(您|你)?的?\s*(邮箱|email|e-mail"
                  r"|邮件地址)",
                  r"加(个|一个)?\s*(whatsapp|line|telegram|signal|viber)\b",
                  r"\breply with your (email|phone|number|contact)\b",
                  r"\b(leave|share|send|give|drop)\s*(us|me)?\s*your\s*e-?mail\b")


class EndsPolitely(Compiles):
    forbidden: tuple[str, ...] = MARKETING
    contact_patterns: tuple[str, ...] = (*CONTACT_REQUEST, *OTHER_CHANNELS)


@rule("ends_politely", params=EndsPolitely)
def ends_politely(p: EndsPolitely, turn: TurnView) -> RuleOutcome:
    """After the user ends or refuses: no marketing, no contact request, no new offer.

    A passive close such as 「好的，您有需要再联系」 passes; 「再给您推荐一台」
    or 「留个电话吧」 fail with that phrase. A user who asks about offers or the price
    (「电话就不留了。那周末有什么优惠吗？」「号码就不留了，能不能再便宜点」) may be told them; a
    contact request still fails.
    """
    hit = find_contact_request(turn.reply, p.contact_patterns)
    if hit:
        return RuleOutcome.failed("asks for contact after the user ended", hit)
    regex = compile_any(p.forbidden)
    text = normalize(turn.reply)
    # the user asks about a promotion (「电话就不留了。那周末有什么优惠吗？」) or how to book
    # (「你们前台电话多少？我自己打过去约」): no sales to answer
    if _ASKS_OFFERS.search(normalize(turn.input)):
        return RuleOutcome.passed("answers the user's question about offers")
    if _ASKS_HOW.search(normalize(turn.input)):
        return RuleOutcome.passed("answers the user's question how to book or reach the store")
    sold = unnegated(regex, text) if regex else None  # 「不再给您推荐了」 promises to stop
    if sold is not None:
        return RuleOutcome.failed("keeps marketing after the user ended", sold.group(0))
    return RuleOutcome.passed("closes without marketing")


#: the user asks how to book or reach the store themselves (「你们前台电话多少？我自己打过去约」)
_ASKS_HOW = re.compile(r"(电话|号码|地址)(是)?多少|怎么(预约|约|去|走|联系|报名)"
                       r"|(预约|参观|报名)(方式|流程)"
                       r"|我自己(打|约|去|联系)|\bhow (do|can) i (book|reach|contact|get there)\b",
                       re.IGNORECASE)
#: the user asks about offers or the price (「有什么优惠吗」「号码就不留了，这车能不能再便宜点」
#: 「any promotions?」), not when a price is what they refuse (「多少钱都不买了」)
_ASKS_OFFERS = re.compile(r"(有|有没有)(什么)?(活动|优惠|折扣|促销)|(活动|优惠|折扣)(吗|么|嘛|呢)"
                          r"|(能|可以|能不能|可不可以)(再)?(便宜|少|优惠|降)|便宜(点|些|一点|一些)"
                          r"|最低(多少|价|能)|多少钱(?![^，,。！？!?]{0,3}(都|也)不)|什么价"
                          r"|价格(是)?多少"
                          r"|\b(any|are there)\s+(promotions?|discounts?|deals?|offers?)\b"
                          r"|\b(cheaper|lowest price|best price)\b", re.I)


# -- across the dialog --------------------------------------------------------------------
# What must hold across turns, not inside one reply; evaluated on every turn it applies to,
# with the dialog so far, and failing at the turn that breaks it:
# - dialog_order: once the user said something (since_user: a complaint), a first move (an
#   apology) must come, in an earlier reply or earlier in this one, before any then move;
# - not_after: once a trigger was said (the user ended, refused), no reply says a forbidden
#   phrase again.
# Both are generic: another business writes its own with params and ledger examples.

Speaker = Literal["user", "agent", "any"]


def _said_by(role: str, who: Speaker) -> bool:
    return who == "any" or (who == "user") == (role == "user")


def _so_far(turn: TurnView) -> list[tuple[str, str]]:
    """The dialog before this reply, oldest first: (role, normalised text) of every message
    of the history, then this turn's input."""
    out = [(h.get("role", ""), normalize(h.get("content", ""))) for h in turn.history]
    out.append(("user", normalize(turn.input)))
    return out


class DialogOrder(Order):
    #: the obligation starts at the first user message matching one of these (empty: at
    #: the start of the dialog)
    since_user: tuple[str, ...] = ()


@rule("dialog_order", params=DialogOrder)
def dialog_order(p: DialogOrder, turn: TurnView) -> RuleOutcome:
    """Across the dialog: after the user said a ``since_user`` phrase, a ``first`` phrase (in
    an earlier reply, or earlier in this one) comes before any ``then`` phrase of a reply.

    Not applicable before the user said it, or when this reply makes no ``then`` move
    (a negated one, or one repeating the user's words, is no move). Regret for the user's
    feeling (「Sorry you feel that way」「很遗憾您这么想」) is no ``first`` move.
    """
    since = compile_any(p.since_user)
    first = compile_any(p.first)
    assert first is not None
    messages = _so_far(turn)
    start = 0
    if since is not None:  # 「不像别家那么坑」 complains of no one, 「在别家被坑」 not of us
        # a complaint the user takes back later (「我搞错了，是另一家店，不是你们」) is none
        back = max((i for i, (role, text) in enumerate(messages)
                    if role == "user" and _WITHDRAWN.search(text)), default=-1)
        hit = next((i for i, (role, text) in enumerate(messages)
                    if i > back and role == "user" and _complains(since, text)), None)
        if hit is None:
            return RuleOutcome.not_applicable("the user has not said what starts the order")
        start = hit
    text = normalize(turn.reply)
    move = first_move(p, turn, text)
    if move is None:
        return RuleOutcome.not_applicable("no 'then' move in the reply")
    before = [t for role, t in messages[start:] if role == "assistant"]
    done = next((m for t in before if (m := _first(first, t))), None)
    if done is not None:
        return RuleOutcome.passed(f"{done.group(0)!r} came in an earlier reply",
                                  move.phrase)
    f = _first(first, text)
    if f is not None and f.start() < move.start:
        return RuleOutcome.passed("in order", text[f.start(): move.end])
    return RuleOutcome.failed(f"{move.phrase!r} before any of {_some(p.first)} in the "
                              "dialog", text[: move.end])


#: regret for the user's feeling, no first move (「Sorry you feel that way」「很遗憾您这么想」)
_REGRET_ONLY = re.compile(r"\bsorry (that |if )?you (feel|think|see it)|(很|非常)?遗憾(您|你)"
                          r"(这么|这样|会这么|会这样)?(想|觉得|认为)", re.IGNORECASE)


def _first(first: re.Pattern[str], text: str) -> re.Match[str] | None:
    """The first ``first`` phrase said in ``text``, not inside a regret for the user's
    feeling (「Sorry you feel that way」 apologises for nothing)."""
    if _REGRET_ONLY.search(text):
        text = _REGRET_ONLY.sub(lambda m: " " * len(m.group(0)), text)
    return unnegated(first, text)


def _complains(since: re.Pattern[str], text: str) -> bool:
    """``text`` says a ``since`` phrase of this business: said (not negated: 「不像别家那么
    坑」), not in a clause about another one (「之前在别家报团被坑惨了」; but 「你们比别家
    还坑」 is about this one)."""
    for m in since.finditer(text):
        if not said_at(text, m.start()):
            continue
        # another business named before it in its sentence (「隔壁那家早教真坑，还骗我们交了一年
        # 的学费」), unless its own clause names this one (「…，你们也一样坑」)
        sentence = max(text.rfind(c, 0, m.start()) for c in "。！？!?\n") + 1
        clause = max(text.rfind(c, 0, m.start()) for c in "，,。！？!?；;\n") + 1
        if not _ELSEWHERE.search(text, sentence, m.start()) or _HERE.search(
                text, clause, m.end()):
            return True
    return False


#: a complaint taken back (「我搞错了，是另一家店，不是你们」)
_WITHDRAWN = re.compile(r"(搞错了|弄错了|误会了|记错了)[^。！？!?]{0,16}(不是你们|另一家|别家)"
                        r"|不关你们(的)?事")
#: this business, named (「你们也一样坑」)
_HERE = re.compile(r"你们|你家|贵店|贵公司|你哋|\byou guys\b|\byour (shop|store|company)\b",
                   re.IGNORECASE)
#: another business (「别家」「之前那家」「another agency」)
_ELSEWHERE = re.compile(r"(?<!比)(?<!跟)(?<!和)别家|隔壁(那|这)?家|对面(那|这)?家"
                        r"|别的[\u4e00-\u9fff]{0,4}(店|厂|家|公司|机构|平台|医院|学校)"
                        r"|别的(店|家|公司|旅行社|机构)|其他(店|家|公司)"
                        r"|之前那家|上一家|上家|网上[^，,。！？!?]{0,4}平台|(其他|别的)平台"
                        r"|之前在[^，,。！？!?]{0,8}(买|看|订|报)"
                        r"|\banother (shop|store|agency|company|dealer)\b",
                        re.IGNORECASE)


class NotAfter(Compiles):
    #: once one of these was said (by ``trigger_by``), ``forbidden`` may not be said again
    trigger: tuple[str, ...] = Field(min_length=1)
    trigger_by: Speaker = "user"
    forbidden: tuple[str, ...] = Field(min_length=1)
    #: a user message from the trigger on (this turn's input included) matching one of
    #: these lifts the ban (the user asks for it again)
    lifted_by: tuple[str, ...] = ()
    #: a clause saying the forbidden thing stops (「后续不会再向您推送其他车辆及活动信息」)
    #: names it without saying it
    stops: tuple[str, ...] = (r"(不会|不再|不会再)[^，,。！？!?；;]{0,8}(推送|推荐|发送|打扰|联系)",
                              r"(关闭|停止|取消)[^，,。！？!?；;]{0,6}(推送|推荐)",
                              # 「其他车源就不打扰您了」
                              r"(就|也|都|便)不(再|多)?(给(您|你))?(打扰|推荐|推|介绍)(您|你)?"
                              r"(了|啦|喇|咯)")


@rule("not_after", params=NotAfter)
def not_after(p: NotAfter, turn: TurnView) -> RuleOutcome:
    """Once a ``trigger`` phrase was said in the dialog (by ``trigger_by``; this turn's input
    counts), the reply says no ``forbidden`` phrase (a negated one is not said).

    Not applicable until the trigger was said, or once a user message since then (the
    trigger's own, when the user said it, outside the trigger's clause) says a
    ``lifted_by`` phrase (the user asks for it again; a negated one, 「不要给我推荐其他车」,
    or one in the trigger's clause, 「其他车不用推荐了」, is the ban itself, not a lift).
    """
    trigger, forbidden = compile_any(p.trigger), compile_any(p.forbidden)
    assert trigger is not None and forbidden is not None
    messages = _so_far(turn)
    at, said = next(((i, m) for i, (role, text) in enumerate(messages)
                     if _said_by(role, p.trigger_by) and (m := trigger.search(text))),
                    (len(messages), None))
    if said is None:
        return RuleOutcome.not_applicable("the trigger was not said")
    lift = compile_any(p.lifted_by)
    # in the trigger's own message, its clause is the ban (「其他车不用推荐了」), not a lift
    own = next(((a, b) for a, b in clause_spans(messages[at][1])
                if a <= said.start() < b), (said.start(), said.end()))
    later = [text if i else f"{text[:own[0]]}，{text[own[1]:]}"
             for i, (role, text) in enumerate(messages[at:]) if role == "user"]
    asked = next((m for text in later if lift is not None and (m := unnegated(lift, text))),
                 None)
    if asked is not None:
        return RuleOutcome.not_applicable(f"the user asked again ({asked.group(0)!r})")
    text = normalize(turn.reply)
    stop = compile_any(p.stops)
    if stop is not None:  # blank out the clauses that say it stops
        for a, b in clause_spans(text):
            if stop.search(text, a, b):
                text = text[:a] + " " * (b - a) + text[b:]
    # the user's own words said back (「很高兴您对上次的试驾活动满意」 to 「上次那个试驾活动我参加
    # 过」) recommend nothing
    user = messages[-1][1]
    bad = next((m for m in forbidden.finditer(text) if said_at(text, m.start())
                and text[max(0, m.start() - 2):m.end()] not in user), None)
    if bad is not None:
        return RuleOutcome.failed(f"{bad.group(0)!r} after {said.group(0)!r} was said",
                                  bad.group(0))
    return RuleOutcome.passed(f"nothing forbidden after {said.group(0)!r}")
