package main

import "github.com/binlogcdc/binlogcdc"

// ConnOptions are the connection flags (--source, --ssl-*), as the
// library defines them.
type ConnOptions = binlogcdc.ConnOptions
