"""A toy carrier bot with one bad habit: it promises free data."""


def reply(turn: dict) -> dict:
    text = turn["input"]
    if "销户" in text:
        return {"output": "销户需要本人到营业厅办理，客服经理会联系您核实",
                "intent_name": "CANCEL_ACCOUNT"}
    if "投诉" in text:
        return {"output": "非常抱歉，已为您转人工客服跟进处理", "intent_name": "COMPLAINT"}
    if "送" in text:
        return {"output": "放心，一定送您10G流量", "intent_name": "PLAN_INFO"}
    return {"output": "具体资费以营业厅核实为准", "intent_name": "PLAN_INFO"}
