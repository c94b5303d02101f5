package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Sample returns n orders (ids first to first+n-1) and payments for most
// of them, the same every time: every fifth order is unpaid, every
// seventh payment is short, and one payment is for an order that does
// not exist.
func Sample(first int64, n int) ([]Order, []Payment) {
	customers := []string{"ann", "bob", "cyd", "dee"}
	methods := []string{"card", "paypal", "transfer"}
	var orders []Order
	var payments []Payment
	for i := range int64(n) {
		o := Order{ID: first + i, Customer: customers[i%int64(len(customers))], Cents: 500 + (i*337)%9500}
		orders = append(orders, o)
		if i%5 == 4 {
			continue
		}
		p := Payment{OrderID: o.ID, Cents: o.Cents, Method: methods[i%int64(len(methods))]}
		if i%7 == 3 {
			p.Cents -= 100
		}
		payments = append(payments, p)
	}
	payments = append(payments, Payment{OrderID: first + int64(n) + 1000, Cents: 100, Method: "card"})
	return orders, payments
}

// partitions is how many partitions Produce gives a topic it creates.
const partitions = 3

// Produce writes orders and payments to their topics, each record keyed
// by its order id (so one order's records share a partition), creating
// the topics with three partitions if they are missing.
func Produce(ctx context.Context, brokers []string, ordersTopic, paymentsTopic string, orders []Order, payments []Payment) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		return fmt.Errorf("kafka client: %w", err)
	}
	defer cl.Close()
	resp, err := kadm.NewClient(cl).CreateTopics(ctx, partitions, 1, nil, ordersTopic, paymentsTopic)
	if err != nil {
		return fmt.Errorf("creating topics: %w", err)
	}
	for _, r := range resp {
		if r.Err != nil && !errors.Is(r.Err, kerr.TopicAlreadyExists) {
			return fmt.Errorf("creating topic %s: %w", r.Topic, r.Err)
		}
	}
	var recs []*kgo.Record
	add := func(topic string, id int64, v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		recs = append(recs, &kgo.Record{Topic: topic, Key: []byte(strconv.FormatInt(id, 10)), Value: b})
		return nil
	}
	for _, o := range orders {
		if err := add(ordersTopic, o.ID, o); err != nil {
			return err
		}
	}
	for _, p := range payments {
		if err := add(paymentsTopic, p.OrderID, p); err != nil {
			return err
		}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return fmt.Errorf("producing: %w", err)
	}
	return nil
}
