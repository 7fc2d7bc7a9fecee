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

// editDistance is the Levenshtein distance between a and b, in runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur := make([]int, len(rb)+1)
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(rb)]
}
