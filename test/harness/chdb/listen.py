# Runs ClickHouse 26.x (libchdb) as a server with its own TCP and HTTP listeners, until stdin closes:
#   python3 listen.py LIBCHDB --path=DIR --config-file=CONFIG.xml
# Why Python: only chdb's command-line entry point (chdb_query_cmdline, clickhouse-local's main)
# lets `SYSTEM START LISTEN` start listeners; the connections that chdb's Node addon makes refuse it
# ("start_servers_callback is not set"), and Node cannot call a C function without an addon. The
# listeners live as long as that one command does, so its last query reads stdin to its end: the
# server stops when its parent closes the pipe or dies. See README.md, "Cluster mode".
import ctypes
import sys

lib = ctypes.CDLL(sys.argv[1])
lib.chdb_query_cmdline.restype = ctypes.c_void_p
lib.chdb_result_error.restype = ctypes.c_char_p
lib.chdb_result_error.argtypes = [ctypes.c_void_p]
args = [b"clickhouse", b"--multiquery"] + [a.encode() for a in sys.argv[2:]]
args.append(
    b"--query=SYSTEM START LISTEN TCP; SYSTEM START LISTEN HTTP; "
    b"SELECT count() FROM file('stdin', 'LineAsString') FORMAT Null"
)
result = lib.chdb_query_cmdline(len(args), (ctypes.c_char_p * len(args))(*args))
error = lib.chdb_result_error(result) if result else b"no result"
if error:
    sys.stderr.write(error.decode(errors="replace") + "\n")
    sys.exit(1)
