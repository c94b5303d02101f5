package state

import "testing"

type frozenRow struct{ V []int }

func (frozenRow) ImmutableInState() {}

// A type that declares itself Immutable is not Mutable although it holds
// a slice, nor is a struct of it and plain values; a slice of it is.
func TestATypeDeclaredImmutableIsNotMutable(t *testing.T) {
	type entry struct {
		Row   frozenRow
		Count int64
	}
	if Mutable[frozenRow]() || Mutable[entry]() {
		t.Fatal("a type declared immutable, or a struct of it, counts as mutable")
	}
	if !Mutable[[]frozenRow]() || !Mutable[struct{ V []int }]() {
		t.Fatal("a slice of rows, or an undeclared struct with a slice, does not count as mutable")
	}
}
