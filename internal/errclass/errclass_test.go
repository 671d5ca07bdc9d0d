package errclass

import (
	"errors"
	"io/fs"
	"testing"
)

func TestMarkKeepsClassAndChain(t *testing.T) {
	class := errors.New("unavailable")
	other := errors.New("rejected")
	cause := &fs.PathError{Op: "open", Path: "/x", Err: fs.ErrNotExist}
	err := Mark(class, cause)
	if !errors.Is(err, class) || errors.Is(err, other) {
		t.Errorf("errors.Is: class %v, other %v; want true, false", errors.Is(err, class), errors.Is(err, other))
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Error("the cause's chain is lost")
	}
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe != cause {
		t.Error("errors.As does not reach the cause")
	}
	if got, want := err.Error(), "unavailable: open /x: file does not exist"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if Mark(class, nil) != nil {
		t.Error("Mark of nil is not nil")
	}
}
