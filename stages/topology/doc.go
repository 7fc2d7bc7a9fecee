// Package topology is the stage that builds the cell's communication graphs
// and their mixing matrices, and records them as one Arrow table, "mixing"
// (round, i, j, weight, spectral_gap; non-zeros only, i then j ascending),
// which package mixing writes and reads back for the train stage. A
// matrix applies from its round (1-based) until the next matrix's round;
// static topologies have one matrix from round 1.
//
// Schedules: mesh-to-ring uses the circulant graphs C_n(1..h) (i linked to
// i±1..i±h) for h = floor(n/2) (the full mesh) down to 1 (the ring), each
// for an equal share of the rounds: h = floor(n/2)-p during rounds
// floor(p*R/H)+1 .. floor((p+1)*R/H), H = floor(n/2) (phases without a
// round are skipped). time-varying-ring links a seeded random relabelling
// of the ring each round. one-peer-exponential pairs i with i XOR 2^(t mod
// log2 n) in round t+1 (n a power of 2), so log2 n rounds average exactly.
//
// Weights: metropolis-hastings w_ij = min(1/(deg_i+1), 1/(deg_j+1)),
// w_ii = 1 - sum; uniform w_ij = 1/(deg_i+1), only on regular graphs. Every
// matrix is checked symmetric and doubly stochastic to 1e-12; its spectral
// gap is rho = 1 - max(|lambda_2|, |lambda_n|)^2 (the paper's). A
// disconnected static graph, or a schedule whose union is disconnected, is
// an error.
//
// Imports: algorithms, artifacts, graphs, manifests, stages,
// stages/mixing.
package topology
