// Command greet prints a string the linker sets with -X main.greeting=…
package main

import "fmt"

var greeting string

func main() { fmt.Println(greeting) }
