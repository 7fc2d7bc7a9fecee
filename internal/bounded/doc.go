// Package bounded reads whole the small files that a user, or anyone who
// can write a directory or a bucket ump reads, controls: a signing key,
// the trusted keys, a report's index. ReadFile opens without waiting (a
// FIFO does not hang it), refuses at once anything but a regular file (a
// device, /dev/zero through a link, a directory) and a file over the
// limit its caller gives, and never reads more than that limit.
//
// Imports: none of ump's packages.
package bounded
