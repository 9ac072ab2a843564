// Package noreturn has functions that never return, and some that look as
// if they might.
package noreturn

import (
	"log"
	"os"
)

func exits() { os.Exit(1) } // want exits:"noReturn"

func fatal(err error) { log.Fatal(err) } // want fatal:"noReturn"

func panics() { panic("no") } // want panics:"noReturn"

func viaHelper() { exits() } // want viaHelper:"noReturn"

func serve(ch chan int) { // want serve:"noReturn"
	for {
		<-ch
	}
}

func block() { select {} } // want block:"noReturn"

func jump() { // want jump:"noReturn"
again:
	log.Print("again")
	goto again
}

type logger struct{}

func (logger) Fatal() { os.Exit(2) } // want Fatal:"noReturn"

func method(l logger) { l.Fatal() } // want method:"noReturn"

func eitherWay(ok bool) { // want eitherWay:"noReturn"
	if ok {
		panic("ok")
	}
	os.Exit(1)
}

// Returning functions: no fact.

func sometimes(ok bool) {
	if ok {
		os.Exit(1)
	}
}

func loops(ch chan int) {
	for {
		if <-ch == 0 {
			return
		}
	}
}

func breaks(ch chan int) {
	for {
		if <-ch == 0 {
			break
		}
	}
}

func selects(ch chan int) {
	select {
	case <-ch:
	}
}

func inLiteral() {
	f := func() { os.Exit(1) }
	_ = f
}

func deferred() { defer os.Exit(1) }

func ping() { pong() }

func pong() { ping() } // a cycle: taken to return, as ctrlflow does
