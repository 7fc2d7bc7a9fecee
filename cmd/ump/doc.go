// Command ump runs decentralized-SGD sweeps declared in manifests and
// records every stage in an event-sourced store. One file per command,
// cmd_<verb>.go: its Action only parses flags and calls runX.
package main
