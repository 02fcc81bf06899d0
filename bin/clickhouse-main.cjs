#!/usr/bin/env node
// The embedded ClickHouse's own process: `node clickhouse-main.cjs LIBCHDB --path=DIR/ --config-file=FILE`.
// It calls chdb's command-line entry point (`chdb_query_cmdline`, clickhouse-local's main) with a
// query that starts ClickHouse's own TCP and HTTP listeners and then reads stdin to its end, so
// the server lives exactly as long as its parent holds the pipe open: a parent that exits or dies
// closes it, and the server shuts down (src/stack/clickhouse-server.ts).
//
// Plain CommonJS, run by node without a loader: under tsx's loader the process dies in ClickHouse's
// start (a segmentation fault), and as an ES module the entry point never starts its listeners.
//
// Why ffi-rs: Node has no FFI of its own, and an addon built at install needs a compiler on the
// user's machine. ffi-rs ships prebuilt for every platform chdb ships, and calls through libffi on
// the thread's own stack. koffi was tried first and fails: it runs C calls on a stack of its own
// allocation, and ClickHouse's stack check (checkStackSize) then refuses every query ("Stack size
// too large" on the main thread, "Frame address is greater than stack begin address" on a worker).
// python3's ctypes works too, but python3 is missing from slim images and from a Mac without
// Xcode's tools, where ffi-rs needs nothing.
'use strict'
// Named so in `ps` and /proc (the benches and stale-server checks find it by name).
process.title = 'clickhouse'
/** @type {typeof import('ffi-rs')} */
const ffi = require('ffi-rs')

/** What the entry point runs: listeners first, then a read of stdin that ends when the pipe closes. */
const LIFETIME_QUERY =
  "SYSTEM START LISTEN TCP; SYSTEM START LISTEN HTTP; SELECT count() FROM file('stdin', 'LineAsString') FORMAT Null"

const [library, ...args] = process.argv.slice(2)
if (!library) {
  process.stderr.write('usage: clickhouse-main LIBCHDB --path=DIR/ --config-file=FILE\n')
  process.exit(2)
}
ffi.open({ library: 'chdb', path: library })
const argv = ['clickhouse', '--multiquery', ...args, `--query=${LIFETIME_QUERY}`]
// Pointers come back as 64-bit integers, and the error text is read only when there is one:
// ffi-rs reads a returned `char *` as a string even when it is NULL (chdb's "no error"), which ended
// every clean shutdown with a segmentation fault.
const call = (funcName, retType, paramsType, paramsValue) =>
  ffi.load({ library: 'chdb', funcName, retType, paramsType, paramsValue })
const result = call(
  'chdb_query_cmdline',
  ffi.DataType.BigInt,
  [ffi.DataType.I32, ffi.DataType.StringArray],
  [argv.length, argv],
)
const failed = (retType) => call('chdb_result_error', retType, [ffi.DataType.BigInt], [result])
if (result === 0n) {
  process.stderr.write('chdb_query_cmdline returned no result\n')
  process.exit(1)
}
if (failed(ffi.DataType.BigInt) !== 0n) {
  process.stderr.write(`${failed(ffi.DataType.String)}\n`)
  process.exit(1)
}
