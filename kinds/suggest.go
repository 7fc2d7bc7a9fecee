package kinds

import "fmt"

// DidYouMean returns ` (did you mean "x"?)` for the option closest to a
// misspelt word (Closest); else "".
func DidYouMean(word string, options []string) string {
	best, ok := Closest(word, options)
	if !ok {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// Closest is the option closest to a misspelt word, when one is close
// enough to be the likely intent: edit distance at most a third of the
// word's length, and at least 1.
func Closest(word string, options []string) (string, bool) {
	best, bestD := "", len(word)/3+1
	for _, o := range options {
		if d := editDistance(word, o); d < bestD && d > 0 {
			best, bestD = o, d
		}
	}
	return best, best != ""
}

// editDistance is the edit distance between a and b in runes, a swap of
// two neighbours counting as one edit (the optimal string alignment
// distance: "alhpa" is one edit from "alpha").
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
