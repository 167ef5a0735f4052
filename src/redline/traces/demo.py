"""Deterministic demo traces: a support agent for a fictional online shop, "Acme Store".

A fresh install has nothing to look at, and a screenshot or a test needs data that does not move.
These runs read like real support conversations (refunds, order status, returns, damaged items, late
parcels) and about 30% of them go wrong the way support agents really go wrong: refunding without
checking the order, refunding a final-sale item, the wrong amount, a made-up delivery date, asking
the same question twice, a rude or off-topic reply; a few runs fail on a tool error and a couple are
still running. Everything is drawn from one seeded ``random.Random``, never from the clock or
``uuid4``, so the same arguments always give the same runs.
"""

from __future__ import annotations

import json
import random
import uuid
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any, Literal

from redline.traces.schemas import RunIn, RunStatus, SpanIn, StepIn

DEFAULT_NOW = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
AGENT = "support-agent"
MODEL = "gpt-4o-mini"
WINDOW = timedelta(days=14)

Intent = Literal["refund", "order_status", "return", "damaged", "late_delivery"]
Flaw = Literal[
    "no_lookup", "non_refundable", "wrong_amount", "hallucinated_date", "repeated_question", "rude"
]
OrderStatus = Literal["delivered", "shipped", "processing"]

# How often things go wrong: v2 is the better prompt, so it slips less than v1.
_FLAW_RATE = {"v1": 0.40, "v2": 0.17}
_FAIL_RATE = 0.03
_EMAIL_RATE = 0.3
_ASK_ORDER_RATE = 0.25
_FINAL_SALE_RATE = 0.15
# Tool schemas and the system prompt the model sees on every call, in tokens.
_PROMPT_OVERHEAD = 240
_ID_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

_INTENTS: tuple[Intent, ...] = ("refund", "order_status", "return", "damaged", "late_delivery")
_INTENT_WEIGHTS = (28, 25, 15, 15, 17)
_REFUND_INTENTS: frozenset[Intent] = frozenset({"refund", "return", "damaged"})
_INTENT_TITLES: dict[Intent, str] = {
    "refund": "Refund request",
    "order_status": "Order status",
    "return": "Return request",
    "damaged": "Damaged item",
    "late_delivery": "Late delivery",
}
_REFUND_REASONS: dict[Intent, str] = {
    "refund": "customer_request",
    "return": "return",
    "damaged": "damaged_item",
}
_FLAWS_BY_INTENT: dict[Intent, tuple[Flaw, ...]] = {
    "refund": ("no_lookup", "non_refundable", "wrong_amount", "repeated_question", "rude"),
    "return": ("no_lookup", "non_refundable", "wrong_amount", "repeated_question", "rude"),
    "damaged": ("no_lookup", "non_refundable", "wrong_amount", "repeated_question", "rude"),
    "order_status": ("hallucinated_date", "hallucinated_date", "repeated_question", "rude"),
    "late_delivery": ("hallucinated_date", "hallucinated_date", "repeated_question", "rude"),
}


@dataclass(frozen=True)
class _Product:
    name: str
    price: float
    refundable: bool = True
    physical: bool = True
    policy: str = "it is within the 30-day refund window"


_PRODUCTS = (
    _Product("Trailhead 40L hiking backpack", 129.00),
    _Product("AeroBrew coffee maker", 39.95),
    _Product("Nimbus noise-cancelling headphones", 199.00),
    _Product("linen duvet cover (queen)", 89.50),
    _Product("12-inch cast-iron skillet", 44.99),
    _Product("Kinetic smartwatch", 249.00),
    _Product("merino wool sweater", 74.00),
    _Product("ceramic planter set", 32.50),
    _Product("USB-C charging dock", 59.99),
    _Product("cork yoga mat", 28.00),
    _Product("bamboo cutting board", 24.95),
    _Product("LED desk lamp", 46.00),
)
_FINAL_SALE = (
    _Product(
        "$50 Acme e-gift card",
        50.00,
        refundable=False,
        physical=False,
        policy="gift cards are non-refundable",
    ),
    _Product(
        "personalised leather wallet",
        65.00,
        refundable=False,
        policy="personalised items are made to order and can't be refunded",
    ),
    _Product(
        "clearance rain jacket",
        38.00,
        refundable=False,
        policy="clearance items are final sale",
    ),
    _Product(
        "PhotoPro editing software licence",
        79.00,
        refundable=False,
        physical=False,
        policy="software licences can't be refunded once the key is issued",
    ),
)
_CUSTOMERS = (
    "Maria Gonzalez",
    "James Whitfield",
    "Priya Raman",
    "Tom Becker",
    "Aisha Bello",
    "Kenji Watanabe",
    "Sophie Laurent",
    "Daniel Okafor",
    "Emma Lindqvist",
    "Lucas Moreau",
    "Hannah Schmidt",
    "Omar Haddad",
    "Chloe Martin",
    "Ravi Patel",
    "Grace Kim",
    "Noah Fischer",
)

_SYSTEM_PROMPTS = {
    "v1": (
        "You are the customer support assistant for Acme Store, an online shop. Help customers with "
        "their orders, returns and refunds. Be friendly and concise. Tools: lookup_order, "
        "check_refund_policy, issue_refund."
    ),
    "v2": (
        "You are the customer support assistant for Acme Store, an online shop. Help customers with "
        "their orders, returns and refunds. Be friendly, polite and concise, and stay on topic.\n"
        "Rules:\n"
        "- Always call lookup_order before discussing or refunding an order.\n"
        "- Call check_refund_policy before issue_refund; never refund final-sale items.\n"
        "- Refund exactly the amount returned by lookup_order.\n"
        "- Only state dates that come from a tool result.\n"
        "- Don't ask for information the customer has already given."
    ),
}

_MESSAGES_WITH_ORDER: dict[Intent, tuple[str, ...]] = {
    "refund": (
        "Hi, I'd like a refund for order {order}. The {product} isn't what I expected.",
        "Can I get my money back for the {product}? Order number {order}.",
        "Please refund order {order}, I ordered the {product} by mistake.",
        "Hello, I changed my mind about the {product} (order {order}). Can I get a refund?",
    ),
    "order_status": (
        "Where is my order {order}?",
        "Hi! Can you tell me the status of order {order}? It's the {product}.",
        "Has order {order} shipped yet?",
        "I ordered a {product} on {ordered}, order {order}. Any update?",
    ),
    "return": (
        "I'd like to return the {product} from order {order}. How does that work?",
        "Order {order}: the {product} isn't what I was looking for, I want to send it back.",
        "Hi, can I return my {product}? The order number is {order}.",
    ),
    "damaged": (
        "My {product} arrived damaged (order {order}). The box was crushed.",
        "Order {order} came today and the {product} is damaged. What can you do?",
        "The {product} from order {order} was damaged when I opened it. I want my money back.",
    ),
    "late_delivery": (
        "Order {order} was supposed to arrive days ago. Where is my {product}?",
        "It's been over a week since I ordered ({order}) and still no {product}. This is ridiculous.",
        "Hi, my {product} (order {order}) is late. When will it actually get here?",
    ),
}
_MESSAGES_WITHOUT_ORDER: dict[Intent, tuple[str, ...]] = {
    "refund": (
        "Hi, I'd like a refund for the {product} I bought recently.",
        "How do I get my money back for the {product}? It's not what I expected.",
    ),
    "order_status": (
        "Hey, what's happening with my {product} order?",
        "I ordered a {product} on {ordered} and haven't heard anything. Where is it?",
    ),
    "return": (
        "How do I return the {product} I ordered?",
        "I want to send back my {product}, I don't need it any more.",
    ),
    "damaged": (
        "The {product} I ordered arrived damaged. Really disappointed.",
        "My {product} showed up damaged, the packaging was torn open. What now?",
    ),
    "late_delivery": (
        "My {product} still hasn't arrived and it's way past the delivery date.",
        "Where is my {product}?? It should have been here days ago.",
    ),
}
_CLAIMS = (" I paid {amount} for it.", " It was {amount}.", " That's {amount} I'd like back.")
_ASK_ORDER = (
    "I can help with that! Could you share your order number? It starts with AC-.",
    "Sure, what's the order number? You'll find it in your confirmation email.",
    "Happy to help. Can you tell me your order number, please?",
)
_GIVE_ORDER = ("Sure, it's {order}.", "{order}", "The order number is {order}.")
_GIVE_AGAIN = ("I just told you: {order}.", "Again, {order}.", "It's {order}, same as I said above.")
_LOOKUP_LEADS = ("", "", "Let me check that order for you.", "One moment while I look up {order}.")

_REFUNDED: dict[Intent, tuple[str, ...]] = {
    "refund": (
        "Done! I've refunded {amount} for your {product} (order {order}). It should appear on your "
        "original payment method within 5-7 business days.",
        "I've issued a refund of {amount} for order {order}. You'll see it on your statement in "
        "5-7 business days. Anything else I can help with?",
    ),
    "return": (
        "I've processed the return for your {product}: a refund of {amount} is on its way and a prepaid "
        "return label is in your inbox. Please send the item back within 14 days.",
        "All set. I've refunded {amount} for order {order} and emailed you a return label. Just drop the "
        "{product} off at any post office.",
    ),
    "damaged": (
        "I'm so sorry your {product} arrived damaged. I've issued a full refund of {amount} to your "
        "original payment method, and there's no need to send it back.",
        "That's not the condition it should have arrived in, sorry! I've refunded {amount} for order "
        "{order}; it will show up within 5-7 business days.",
    ),
}
_DECLINED: dict[Intent, tuple[str, ...]] = {
    "refund": (
        "I'm sorry, but I can't refund the {product}: {policy}. I'm happy to help with anything else on "
        "order {order}.",
        "Unfortunately the {product} isn't eligible for a refund because {policy}. If there's a problem "
        "with it, let me know and I'll see what else we can do.",
    ),
    "return": (
        "I'm sorry, the {product} can't be returned for a refund: {policy}. Is there anything else I can "
        "help with?",
    ),
    "damaged": (
        "I'm sorry it arrived damaged. I can't refund the {product} because {policy}, but I've asked our "
        "warehouse to send you a replacement at no cost.",
    ),
}
_STATUS_ANSWERS: dict[OrderStatus, tuple[str, ...]] = {
    "delivered": (
        "Your {product} (order {order}) was delivered on {delivered}. If you can't find it, check with "
        "neighbours or your building's mailroom, and let me know if it still hasn't turned up.",
        "Order {order} shows as delivered on {delivered}. Is there anything wrong with it?",
    ),
    "shipped": (
        "Your {product} is on its way! The carrier expects to deliver it on {eta}, and the tracking link "
        "is in your shipping confirmation email.",
        "Order {order} has shipped and should arrive on {eta}.",
    ),
    "processing": (
        "Order {order} is still being prepared in our warehouse. It usually ships within 1-2 business "
        "days, and you'll get a tracking email as soon as it does.",
    ),
}
_LATE_ANSWERS: dict[OrderStatus, tuple[str, ...]] = {
    "shipped": (
        "I'm sorry your {product} is late. The carrier now expects to deliver it on {eta}. If it hasn't "
        "arrived by then, reply here and we'll send a replacement or a refund.",
        "Apologies for the delay! Order {order} is in transit and the updated delivery date is {eta}.",
    ),
    "processing": (
        "I'm sorry, order {order} hasn't shipped yet because of a stock delay. It should leave our "
        "warehouse within 2 business days, and I've upgraded you to express shipping for free.",
    ),
}
_HALLUCINATED_PAST = (
    "Your {product} was delivered on {wrong}. It should be waiting for you!",
    "Our records show order {order} was delivered on {wrong}, so it should be with you already.",
)
_HALLUCINATED_FUTURE = (
    "Good news: order {order} is out for delivery and will arrive on {wrong}.",
    "Your {product} is on its way and will be with you on {wrong} at the latest.",
)
_RUDE = (
    "As I said, these things take time. Please read the FAQ before contacting support.",
    "Honestly, once the parcel leaves our warehouse that's not really our problem.",
    "I can't help with that. Maybe be more careful when you order next time.",
    "Great question! By the way, our autumn sale starts Friday: 20% off all cookware with code FALL20.",
    "Did you know Acme Store was founded in 1998? We now have over 2 million happy customers!",
)
_APOLOGIES = (
    "Sorry, I couldn't complete that because one of our systems isn't responding. I've passed your "
    "request to a colleague who will email you within 24 hours.",
    "I'm sorry, something went wrong on our side and I couldn't finish this. Please try again in a "
    "little while.",
)
_TOOL_ERRORS = {
    "lookup_order": (
        "orders-service timed out after 10s",
        "503 Service Unavailable from orders-service",
    ),
    "issue_refund": (
        "payment provider declined the refund (code R-402)",
        "payments-api: connection reset by peer",
    ),
}


@dataclass(frozen=True)
class _Order:
    order_id: str
    product: _Product
    status: OrderStatus
    ordered_on: date
    delivered_on: date | None
    expected_on: date | None

    def as_result(self) -> dict[str, Any]:
        """What lookup_order returns: the facts a careful agent should base its answer on."""
        return {
            "order_id": self.order_id,
            "status": self.status,
            "item": self.product.name,
            "amount": self.product.price,
            "currency": "USD",
            "ordered_at": self.ordered_on.isoformat(),
            "delivered_at": self.delivered_on.isoformat() if self.delivered_on else None,
            "estimated_delivery": self.expected_on.isoformat() if self.expected_on else None,
        }


@dataclass(frozen=True)
class _Scenario:
    """Everything decided up front about one run, so the script only has to play it out."""

    index: int
    version: str
    channel: str
    customer: str
    intent: Intent
    order: _Order
    flaw: Flaw | None
    ask_order: bool
    claimed_amount: float | None
    fail_at: str | None
    stop_at: str | None
    started_at: datetime


class _ToolFailedError(Exception):
    """A tool errored: the script stops, the agent apologises and the run is "failed"."""


class _StillRunningError(Exception):
    """A tool call is still in flight: the script stops and the run is "running"."""


def _money(amount: float) -> str:
    return f"${amount:,.2f}"


def _day(value: date) -> str:
    return f"{value:%A, %B} {value.day}"


def _tokens(text: str) -> int:
    """Roughly four characters a token, which is what tokenizers average on English."""
    return max(1, len(text) // 4)


def _step_text(step: StepIn) -> str:
    return step.content + (json.dumps(step.tool_input) if step.tool_input else "")


@dataclass
class _Trace:
    """Collects one run's steps and spans, with a clock so spans follow each other like real calls."""

    sc: _Scenario
    rng: random.Random
    clock: datetime
    steps: list[StepIn] = field(default_factory=list)
    children: list[SpanIn] = field(default_factory=list)
    root_id: str = ""
    spans_made: int = 0

    def __post_init__(self) -> None:
        self.root_id = self._span_id()

    def _span_id(self) -> str:
        # Random bits for realism, a counter so two spans of a run can never collide.
        self.spans_made += 1
        return f"{self.rng.getrandbits(48):012x}{self.spans_made:04x}"

    def _tick(self, low: float, high: float) -> tuple[datetime, datetime]:
        start = self.clock
        self.clock = start + timedelta(seconds=self.rng.uniform(low, high))
        return start, self.clock

    def _format(self, text: str, sender: str) -> str:
        """Emails get a sign-off (and replies a greeting too); chat messages are sent as they are."""
        if self.sc.channel != "email":
            return text
        first = self.sc.customer.split()[0]
        if sender == "user":
            return f"{text}\n\nThanks,\n{first}"
        return f"Hi {first},\n\n{text}\n\nBest regards,\nAcme Store Support"

    def _llm(self, completion: str) -> None:
        prompt_tokens = _PROMPT_OVERHEAD + sum(_tokens(_step_text(step)) for step in self.steps)
        completion_tokens = _tokens(completion)
        start, end = self._tick(0.4 + completion_tokens * 0.01, 1.0 + completion_tokens * 0.02)
        attributes = {"model": MODEL, "prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}
        self.children.append(
            SpanIn(
                span_id=self._span_id(),
                parent_span_id=self.root_id,
                kind="llm",
                name=f"chat {MODEL}",
                attributes=attributes,
                started_at=start,
                ended_at=end,
            )
        )

    def system(self, text: str) -> None:
        self.steps.append(StepIn(role="system", content=text))

    def user(self, text: str) -> None:
        if any(step.role == "user" for step in self.steps):
            self._tick(4.0, 40.0)  # the customer reads the reply and types an answer
        self.steps.append(StepIn(role="user", content=self._format(text, "user")))

    def say(self, text: str) -> None:
        text = self._format(text, "assistant")
        self._llm(text)
        self.steps.append(StepIn(role="assistant", content=text))

    def answer(self, text: str) -> None:
        """The final reply; a rude run swaps the right answer for a rude or off-topic one."""
        self.say(self.rng.choice(_RUDE) if self.sc.flaw == "rude" else text)

    def call(self, tool: str, args: dict[str, Any], result: dict[str, Any], lead: str = "") -> None:
        """One model call that asks for a tool, then the tool's span and result step."""
        call_id = "call_" + "".join(self.rng.choices(_ID_ALPHABET, k=24))
        self._llm(lead + json.dumps(args))
        self.steps.append(
            StepIn(role="assistant", content=lead, tool_name=tool, tool_input=args, tool_call_id=call_id)
        )
        span_id = self._span_id()
        attributes: dict[str, Any] = {"input": args, "tool_call_id": call_id}
        if self.sc.stop_at == tool:
            self.children.append(
                SpanIn(
                    span_id=span_id,
                    parent_span_id=self.root_id,
                    kind="tool",
                    name=tool,
                    attributes=attributes,
                    started_at=self.clock,
                )
            )
            raise _StillRunningError(tool)
        start, end = self._tick(0.05, 0.9)
        failed = self.sc.fail_at == tool
        if failed:
            result = {"error": self.rng.choice(_TOOL_ERRORS[tool])}
            attributes["error"] = True
        self.children.append(
            SpanIn(
                span_id=span_id,
                parent_span_id=self.root_id,
                kind="tool",
                name=tool,
                attributes=attributes,
                started_at=start,
                ended_at=end,
            )
        )
        self.steps.append(
            StepIn(
                role="tool",
                content=json.dumps(result),
                tool_name=tool,
                tool_call_id=call_id,
                metadata={"is_error": True} if failed else None,
            )
        )
        if failed:
            raise _ToolFailedError(result["error"])


def _fill(template: str, sc: _Scenario, **extra: str) -> str:
    """Fills a template from the scenario; `extra` adds or overrides fields (a wrong amount, a wrong date)."""
    order = sc.order
    fields = {
        "order": order.order_id,
        "product": order.product.name,
        "ordered": _day(order.ordered_on),
        "amount": _money(order.product.price),
        "policy": order.product.policy,
        "delivered": _day(order.delivered_on) if order.delivered_on else "",
        "eta": _day(order.expected_on) if order.expected_on else "",
    }
    return template.format(**(fields | extra))


def _open(t: _Trace) -> None:
    """The customer's first message, and the back-and-forth for the order number when it was left out."""
    sc, rng = t.sc, t.rng
    if not sc.ask_order:
        message = _fill(rng.choice(_MESSAGES_WITH_ORDER[sc.intent]), sc)
    else:
        message = _fill(rng.choice(_MESSAGES_WITHOUT_ORDER[sc.intent]), sc)
    if sc.claimed_amount is not None:
        message += rng.choice(_CLAIMS).format(amount=_money(sc.claimed_amount))
    t.user(message)
    if not sc.ask_order:
        return
    t.say(rng.choice(_ASK_ORDER))
    t.user(_fill(rng.choice(_GIVE_ORDER), sc))
    if sc.flaw == "repeated_question":
        t.say(rng.choice(_ASK_ORDER))
        t.user(_fill(rng.choice(_GIVE_AGAIN), sc))


def _refund_unchecked(t: _Trace) -> None:
    """The no-lookup flaw: straight to issue_refund with whatever amount the customer claimed."""
    sc = t.sc
    amount = sc.order.product.price if sc.claimed_amount is None else sc.claimed_amount
    _refund(t, amount)
    t.answer(_fill(t.rng.choice(_REFUNDED[sc.intent]), sc, amount=_money(amount)))


def _refund(t: _Trace, amount: float) -> None:
    sc = t.sc
    args = {"order_id": sc.order.order_id, "amount": amount, "reason": _REFUND_REASONS[sc.intent]}
    refund_id = f"rf_{t.rng.getrandbits(40):010x}"
    result = {"refund_id": refund_id, "order_id": sc.order.order_id, "amount": amount, "status": "issued"}
    t.call("issue_refund", args, result)


def _wrong_amount(rng: random.Random, price: float) -> float:
    """Mistakes seen in the wild: doubling, halving, or adding shipping that was never charged."""
    return rng.choice((round(price * 2, 2), round(price / 2, 2), round(price + rng.choice((5.0, 9.99)), 2)))


def _refund_flow(t: _Trace) -> None:
    """Refund, return and damaged item: check the policy, refund the order amount, confirm."""
    sc, rng = t.sc, t.rng
    product = sc.order.product
    if sc.version == "v2" or (not product.refundable and sc.flaw is None) or rng.random() < 0.5:
        policy = {
            "order_id": sc.order.order_id,
            "item": product.name,
            "refundable": product.refundable,
            "window_days": 30,
            "reason": product.policy,
        }
        t.call("check_refund_policy", {"order_id": sc.order.order_id}, policy)
    if not product.refundable and sc.flaw != "non_refundable":
        t.answer(_fill(rng.choice(_DECLINED[sc.intent]), sc))
        return
    amount = _wrong_amount(rng, product.price) if sc.flaw == "wrong_amount" else product.price
    _refund(t, amount)
    t.answer(_fill(rng.choice(_REFUNDED[sc.intent]), sc, amount=_money(amount)))


def _hallucinated(rng: random.Random, sc: _Scenario) -> str:
    """A confident date that no tool returned."""
    order = sc.order
    today = sc.started_at.date()
    if order.status == "delivered" and order.delivered_on:
        wrong = order.delivered_on + timedelta(days=rng.choice((-3, -2, -1, 1)))
        return _fill(rng.choice(_HALLUCINATED_PAST), sc, wrong=_day(wrong))
    if order.status == "shipped" and order.expected_on:
        wrong = order.expected_on + timedelta(days=rng.randint(1, 5))
        return _fill(rng.choice(_HALLUCINATED_FUTURE), sc, wrong=_day(wrong))
    # Still processing: any delivery date at all is invented.
    return _fill(rng.choice(_HALLUCINATED_FUTURE), sc, wrong=_day(today + timedelta(days=rng.randint(1, 4))))


def _status_flow(t: _Trace) -> None:
    """Order status and late delivery: answer from what lookup_order said."""
    sc, rng = t.sc, t.rng
    if sc.flaw == "hallucinated_date":
        t.answer(_hallucinated(rng, sc))
        return
    answers = _LATE_ANSWERS if sc.intent == "late_delivery" else _STATUS_ANSWERS
    t.answer(_fill(rng.choice(answers[sc.order.status]), sc))


def _script(t: _Trace) -> None:
    """Plays one conversation out; tool failures and in-flight calls end it early by raising."""
    sc, rng = t.sc, t.rng
    t.system(_SYSTEM_PROMPTS[sc.version])
    _open(t)
    if sc.flaw == "no_lookup":
        _refund_unchecked(t)
        return
    lead = _fill(rng.choice(_LOOKUP_LEADS), sc)
    t.call("lookup_order", {"order_id": sc.order.order_id}, sc.order.as_result(), lead=lead)
    if sc.intent in _REFUND_INTENTS:
        _refund_flow(t)
    else:
        _status_flow(t)


def _first_user(t: _Trace) -> str:
    return next(step.content for step in t.steps if step.role == "user")


def _pick_product(rng: random.Random, intent: Intent, flaw: Flaw | None) -> _Product:
    """Final-sale items show up where the agent should say no, and always where it wrongly says yes."""
    final_sale = flaw == "non_refundable" or (intent in _REFUND_INTENTS and rng.random() < _FINAL_SALE_RATE)
    if not final_sale:
        return rng.choice(_PRODUCTS)
    pool = [p for p in _FINAL_SALE if p.physical] if intent == "damaged" else list(_FINAL_SALE)
    return rng.choice(pool)


def _make_order(rng: random.Random, intent: Intent, product: _Product, today: date) -> _Order:
    """Dates consistent with the status: delivered orders are in the past, shipped ones expected soon."""
    order_id = f"AC-{rng.randint(100000, 999999)}"
    status: OrderStatus
    if intent in _REFUND_INTENTS:
        status = "delivered"
    elif intent == "late_delivery":
        status = rng.choice(("shipped", "shipped", "processing"))
    else:
        status = rng.choice(("delivered", "shipped", "processing"))
    if status == "delivered":
        ordered = today - timedelta(days=rng.randint(7, 25))
        return _Order(order_id, product, status, ordered, ordered + timedelta(days=rng.randint(2, 5)), None)
    late = intent == "late_delivery"
    days_ago = rng.randint(8, 14) if late else rng.randint(1, 5) if status == "shipped" else rng.randint(0, 2)
    ordered = today - timedelta(days=days_ago)
    expected = today + timedelta(days=rng.randint(1, 4)) if status == "shipped" else None
    return _Order(order_id, product, status, ordered, None, expected)


def _claimed_amount(rng: random.Random, price: float) -> float:
    """What the customer says they paid; sometimes rounded up, which an agent that never checks believes."""
    return price if rng.random() < 0.5 else float(round(price + rng.choice((5, 10, 20)), -1))


def _running_count(count: int) -> int:
    """A couple of the newest runs are still in progress, as on any live project."""
    return min(2, count // 50)


def _start_time(rng: random.Random, index: int, count: int, now: datetime, running: bool) -> datetime:
    """Runs are spread in index order over the window, ending well before `now` so none ends in the future."""
    if running:
        return now - timedelta(seconds=rng.uniform(3.0, 25.0))
    spread = WINDOW - timedelta(minutes=10)
    return now - WINDOW + spread * ((index + rng.random()) / count)


def _scenario(rng: random.Random, index: int, count: int, now: datetime) -> _Scenario:
    version = "v1" if index % 2 == 0 else "v2"
    channel = "email" if rng.random() < _EMAIL_RATE else "chat"
    customer = rng.choice(_CUSTOMERS)
    intent = rng.choices(_INTENTS, weights=_INTENT_WEIGHTS)[0]
    running = index >= count - _running_count(count)
    failing = not running and rng.random() < _FAIL_RATE
    flaw: Flaw | None = None
    if not running and not failing and rng.random() < _FLAW_RATE[version]:
        flaw = rng.choice(_FLAWS_BY_INTENT[intent])
    product = _pick_product(rng, intent, flaw)
    started_at = _start_time(rng, index, count, now, running)
    order = _make_order(rng, intent, product, started_at.date())
    fail_at = None
    if failing:
        refunds = intent in _REFUND_INTENTS and product.refundable and rng.random() < 0.5
        fail_at = "issue_refund" if refunds else "lookup_order"
    ask_order = flaw == "repeated_question" or rng.random() < _ASK_ORDER_RATE
    claimed_amount = _claimed_amount(rng, product.price) if flaw == "no_lookup" else None
    return _Scenario(
        index=index,
        version=version,
        channel=channel,
        customer=customer,
        intent=intent,
        order=order,
        flaw=flaw,
        ask_order=ask_order,
        claimed_amount=claimed_amount,
        fail_at=fail_at,
        stop_at="lookup_order" if running else None,
        started_at=started_at,
    )


def _run(project_id: uuid.UUID, sc: _Scenario, rng: random.Random) -> RunIn:
    t = _Trace(sc, rng, sc.started_at)
    status: RunStatus = "completed"
    try:
        _script(t)
    except _ToolFailedError:
        t.say(rng.choice(_APOLOGIES))
        status = "failed"
    except _StillRunningError:
        status = "running"
    finished = status != "running"
    ended_at = t.clock + timedelta(seconds=rng.uniform(0.02, 0.2)) if finished else None
    root = SpanIn(
        span_id=t.root_id,
        kind="agent",
        name=AGENT,
        attributes={"agent_version": sc.version},
        started_at=sc.started_at,
        ended_at=ended_at,
    )
    quality = "bad" if sc.flaw is not None or status == "failed" else "good"
    return RunIn(
        project_id=project_id,
        external_id=f"demo-{sc.index:04d}",
        agent=AGENT,
        agent_version=sc.version,
        version_source="pinned",
        status=status,
        title=f"{_INTENT_TITLES[sc.intent]} · {sc.order.order_id}",
        input={"customer": sc.customer, "message": _first_user(t)},
        output={"answer": t.steps[-1].content} if finished else None,
        metadata={"channel": sc.channel, "demo": True, "quality": quality, "flaw": sc.flaw},
        started_at=sc.started_at,
        ended_at=ended_at,
        steps=t.steps,
        spans=[root, *t.children],
    )


def demo_runs(
    project_id: uuid.UUID, count: int = 200, seed: int = 7, now: datetime | None = None
) -> list[RunIn]:
    """`count` support-agent runs over the 14 days before `now`; same arguments, same runs.

    `now` defaults to a fixed moment rather than the clock so the output never changes between calls.
    """
    if count < 0:
        raise ValueError("count can't be negative")
    now = DEFAULT_NOW if now is None else now
    if now.tzinfo is None:
        raise ValueError("now must be timezone-aware")
    rng = random.Random(seed)
    return [_run(project_id, _scenario(rng, index, count, now), rng) for index in range(count)]
