package supportbundle

import (
	"strings"
	"testing"
)

// A kept bundle is bounded: the write past the bound fails and says so,
// and nothing past it is kept.
func TestCappedRefusesPastItsBound(t *testing.T) {
	c := &capped{max: 8}
	if _, err := c.Write([]byte("12345")); err != nil || c.over {
		t.Fatalf("a write within the bound: %v, over %v", err, c.over)
	}
	if _, err := c.Write([]byte("6789")); err == nil || !c.over || c.Len() != 5 {
		t.Fatalf("a write past the bound: %v, over %v, %d bytes kept", err, c.over, c.Len())
	}
	if !strings.Contains(c.String(), "12345") {
		t.Errorf("kept %q", c.String())
	}
}
