package dashboard

import (
	"encoding/json"
	"math"
	"testing"
)

// TestFiguresWithoutANumberAreNull: a diverged run's NaN and Inf become
// null (encoding/json refuses them, which would fail the whole answer).
func TestFiguresWithoutANumberAreNull(t *testing.T) {
	data, err := json.Marshal(nums([]float64{0.5, math.NaN(), math.Inf(1), math.Inf(-1), 2}))
	if err != nil || string(data) != "[0.5,null,null,null,2]" {
		t.Errorf("got %s, %v; want [0.5,null,null,null,2]", data, err)
	}
}

// TestOnlyLoopbackGoesWithoutAToken: the addresses ump serve serves
// without a token.
func TestOnlyLoopbackGoesWithoutAToken(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8080": true, "localhost:0": true, "[::1]:8080": true, "127.1.2.3:80": true,
		":8080": false, "0.0.0.0:8080": false, "[::]:8080": false, "10.0.0.5:8080": false, "example.org:80": false,
		"nonsense": false,
	} {
		if got := IsLoopback(addr); got != want {
			t.Errorf("IsLoopback(%q) = %v, want %v", addr, got, want)
		}
	}
}
