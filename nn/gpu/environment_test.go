package gpu

import "testing"

// TestJoinFlagsKeepsTheUsersFlags: the user's XLA_FLAGS join the engine's
// instead of replacing them; a flag the user sets keeps the user's value,
// and joining twice (ump started by ump) adds nothing.
func TestJoinFlagsKeepsTheUsersFlags(t *testing.T) {
	ours := "--xla_gpu_enable_triton_gemm=false --xla_gpu_deterministic_ops=true"
	for _, c := range []struct{ theirs, want string }{
		{"", ours},
		{"--xla_dump_to=/tmp/d", ours + " --xla_dump_to=/tmp/d"},
		{"--xla_gpu_deterministic_ops=false  --xla_dump_to=/tmp/d",
			"--xla_gpu_enable_triton_gemm=false --xla_gpu_deterministic_ops=false --xla_dump_to=/tmp/d"},
		{ours, ours},
	} {
		if got := joinFlags(ours, c.theirs); got != c.want {
			t.Errorf("joinFlags(ours, %q) = %q, want %q", c.theirs, got, c.want)
		}
		if again := joinFlags(ours, joinFlags(ours, c.theirs)); again != c.want {
			t.Errorf("joined twice with %q: %q, want %q", c.theirs, again, c.want)
		}
	}
}
