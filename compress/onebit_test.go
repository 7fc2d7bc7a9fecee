package compress

import (
	"slices"
	"testing"
)

// TestOnebitDecodesTheTwoMeans: onebit sends the mean of the non-negative
// entries and the mean of the negative ones; each entry decodes to its
// sign's mean.
func TestOnebitDecodesTheTwoMeans(t *testing.T) {
	in := []float32{3, -1, 1, -3, 0}
	c, err := NewCodec(Spec{Codec: "onebit"})
	if err != nil {
		t.Fatal(err)
	}
	got := make([]float32, len(in))
	c.Decode(c.Encode(in, Draw{}), Draw{}, got)
	pos, neg := float32(4.0/3), float32(-2) // (3+1+0)/3 and (-1-3)/2, by hand
	if want := []float32{pos, neg, pos, neg, pos}; !slices.Equal(got, want) {
		t.Errorf("onebit decodes %v as %v, want %v", in, got, want)
	}
}
