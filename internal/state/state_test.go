package state

import "testing"

func TestTimersFireInTimeOrderOnceEach(t *testing.T) {
	ts := NewTimers[string]()
	ts.Register(30, "c")
	ts.Register(10, "a")
	ts.Register(20, "b")
	ts.Register(10, "a") // duplicate
	ts.Register(25, "gone")
	ts.Delete(25, "gone")
	if n, _ := ts.Next(); n != 10 {
		t.Fatalf("Next = %d, want 10", n)
	}
	var got []string
	for {
		_, k, ok := ts.PopDue(25)
		if !ok {
			break
		}
		got = append(got, k)
	}
	if len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Fatalf("due at 25: got %v, want [a b]", got)
	}
	if ts.Len() != 1 {
		t.Fatalf("Len = %d, want 1", ts.Len())
	}
	if _, k, ok := ts.PopDue(100); !ok || k != "c" {
		t.Fatalf("got %q %v, want c", k, ok)
	}
	if _, ok := ts.Next(); ok {
		t.Fatal("timers left")
	}
}

func TestDeleteThenRegisterAgainFiresOnce(t *testing.T) {
	ts := NewTimers[int]()
	ts.Register(5, 1)
	ts.Delete(5, 1)
	ts.Register(5, 1)
	n := 0
	for {
		if _, _, ok := ts.PopDue(5); !ok {
			break
		}
		n++
	}
	if n != 1 {
		t.Fatalf("fired %d times, want 1", n)
	}
}

func TestRegisterRejectsTypeClash(t *testing.T) {
	b := NewBackend()
	if _, err := Register[string, int](b, "x", nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := Register[string, int](b, "x", nil, nil, nil); err != nil {
		t.Fatalf("re-registering with the same types: %v", err)
	}
	if _, err := Register[string, string](b, "x", nil, nil, nil); err == nil {
		t.Fatal("registering x with other types succeeded")
	}
}
