"""The facts a user may ask the reference agent about: the field tables, the knowledge
lookup and the factual answers."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ._turn import _Turn


@dataclass(frozen=True)
class _Field:
    """A fact the user may ask about, and where the knowledge holds it."""

    label: str
    pattern: re.Pattern[str]
    path: tuple[str, ...] | None  # None: never in the knowledge
    template: str = "{}"


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
