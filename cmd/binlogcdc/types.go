package main

import "github.com/binlogcdc/binlogcdc"

// The library's option types, under the names the commands use.
type (
	ConnOptions   = binlogcdc.ConnOptions
	RemoteOptions = binlogcdc.RemoteOptions
	ReplayOptions = binlogcdc.ReplayOptions
)
