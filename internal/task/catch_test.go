package task

import (
	"errors"
	"testing"
)

func TestCatchReturnsTheErrorAnOperatorFailedWith(t *testing.T) {
	want := errors.New("boom")
	if got := Catch(func() { Fail(want) }); got != want {
		t.Fatalf("Catch(Fail(boom)) = %v, want %v", got, want)
	}
	if got := Catch(func() {}); got != nil {
		t.Fatalf("Catch of a function that returns = %v, want nil", got)
	}
}

func TestCatchLetsOtherPanicsThrough(t *testing.T) {
	defer func() {
		if p := recover(); p != "bug" {
			t.Fatalf("recovered %v, want the panic %q", p, "bug")
		}
	}()
	Catch(func() { panic("bug") })
	t.Fatal("Catch returned from a panic that is not a failure")
}
