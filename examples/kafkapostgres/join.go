package main

import (
	"github.com/weir-stream/weir"
)

// Order is a record of the orders topic.
type Order struct {
	ID       int64  `json:"id"`
	Customer string `json:"customer"`
	Cents    int64  `json:"cents"` // the amount due
}

// Payment is a record of the payments topic: a payment for one order.
type Payment struct {
	OrderID int64  `json:"order_id"`
	Cents   int64  `json:"cents"`
	Method  string `json:"method"`
}

// PaidOrder is an order joined with its payment: a row of the output
// table.
type PaidOrder struct {
	OrderID   int64  `db:"order_id"`
	Customer  string `db:"customer"`
	Cents     int64  `db:"cents"`
	PaidCents int64  `db:"paid_cents"`
	Method    string `db:"method"`
	// Status is "paid", or "underpaid" when the payment is short of the
	// amount due.
	Status string `db:"status"`
}

// createTable is the output table's definition; %s is its name.
const createTable = `CREATE TABLE IF NOT EXISTS %s (
	order_id   bigint PRIMARY KEY,
	customer   text   NOT NULL,
	cents      bigint NOT NULL,
	paid_cents bigint NOT NULL,
	method     text   NOT NULL,
	status     text   NOT NULL
)`

// joinPayment joins an order with its payment, whichever comes first:
// the first to arrive waits in the order id's keyed state, which
// checkpoints save, until the other comes; then the pair is emitted once
// and the state cleared. An order without a payment (or a payment without
// an order) waits and emits nothing. Each order is paid by one payment;
// a second payment for an order already joined would wait for an order
// that never comes.
type joinPayment struct {
	order   *weir.ValueState[Order, int64]
	payment *weir.ValueState[Payment, int64]
}

func (j *joinPayment) Open(sc *weir.StateContext[int64]) error {
	j.order = weir.NewValueState[Order](sc, "order")
	j.payment = weir.NewValueState[Payment](sc, "payment")
	return nil
}

// ProcessElement1 takes an order.
func (j *joinPayment) ProcessElement1(ctx *weir.KeyedContext[int64, PaidOrder], o Order) error {
	if p, ok := j.payment.Value(); ok {
		j.payment.Clear()
		ctx.Emit(paid(o, p))
		return nil
	}
	j.order.Update(o)
	return nil
}

// ProcessElement2 takes a payment.
func (j *joinPayment) ProcessElement2(ctx *weir.KeyedContext[int64, PaidOrder], p Payment) error {
	if o, ok := j.order.Value(); ok {
		j.order.Clear()
		ctx.Emit(paid(o, p))
		return nil
	}
	j.payment.Update(p)
	return nil
}

// paid joins order o with its payment p.
func paid(o Order, p Payment) PaidOrder {
	status := "paid"
	if p.Cents < o.Cents {
		status = "underpaid"
	}
	return PaidOrder{OrderID: o.ID, Customer: o.Customer, Cents: o.Cents, PaidCents: p.Cents, Method: p.Method, Status: status}
}

// Join keys orders and payments by order id and joins them.
func Join(orders weir.Stream[Order], payments weir.Stream[Payment]) weir.Stream[PaidOrder] {
	return weir.CoProcess(
		weir.KeyBy(orders, func(o Order) int64 { return o.ID }),
		weir.KeyBy(payments, func(p Payment) int64 { return p.OrderID }),
		func() *joinPayment { return &joinPayment{} }, weir.Name("join"), weir.UID("join"))
}
