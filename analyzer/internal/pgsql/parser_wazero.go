//go:build !cgo

package pgsql

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	_ "unsafe" // go:linkname

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	_ "github.com/wasilibs/go-pgquery/parser" // links the module and host functions named below
	"github.com/wasilibs/wazero-helpers/allocator"
	"google.golang.org/protobuf/proto"
)

// Backend names the parser built in: "wasm", libpg_query compiled to
// WebAssembly and run by wazero, for builds without cgo.
const Backend = "wasm"

// The module is go-pgquery's build of libpg_query (the same C sources as
// pg_query_go's, compiled to WebAssembly with threads and setjmp), and so
// are the host functions its threads and setjmp need. go-pgquery runs it in
// a runtime of its own making whose compilation cache is in memory only:
// every process that parses would compile 2 MB of WebAssembly to machine
// code, about 2 s, and under go vet every package is a process. So the
// runtime is made here, with its compilation cache in the user's cache
// directory, and the module and host functions are reached by linkname,
// since go-pgquery keeps them in internal packages. go.mod pins the
// version; a move of either name fails the link of every !cgo binary, as
// cmd/leaseguard's TestWithoutCgo builds one.

//go:linkname wasmModule github.com/wasilibs/go-pgquery/internal/wasm.LibPGQuery
var wasmModule []byte

//go:linkname wasixInstantiate github.com/wasilibs/go-pgquery/internal/wasix32v1.Instantiate
func wasixInstantiate(ctx context.Context, r wazero.Runtime) (api.Closer, error)

//go:linkname wasixContext github.com/wasilibs/go-pgquery/internal/wasix32v1.BackgroundContext
func wasixContext() context.Context

// CacheDir returns the directory of the compiled parser, or "" when there
// is none (no user cache directory): each process then compiles it.
func CacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "leaseguard", "wazero")
}

// engine is the runtime and the compiled module, and the module instances
// that are not in use: an instance runs one call at a time, so parses in
// parallel take one each. A process makes one, on its first parse.
type engine struct {
	rt   wazero.Runtime
	code wazero.CompiledModule
	err  error

	mu   sync.Mutex
	idle []*instance
}

var theEngine = sync.OnceValue(func() *engine { return newEngine(CacheDir()) })

// newEngine compiles the module, or loads it from the compilation cache in
// dir ("": none but memory).
func newEngine(dir string) *engine {
	ctx := context.Background()
	cfg := wazero.NewRuntimeConfig().WithCoreFeatures(api.CoreFeaturesV2 | experimental.CoreFeaturesThreads)
	if dir != "" {
		// A directory that cannot be made or written leaves the cache
		// in memory: slower, not wrong.
		if c, err := wazero.NewCompilationCacheWithDir(dir); err == nil {
			cfg = cfg.WithCompilationCache(c)
		}
	}
	e := &engine{rt: wazero.NewRuntimeWithConfig(ctx, cfg)}
	if _, e.err = wasi_snapshot_preview1.Instantiate(ctx, e.rt); e.err != nil {
		return e
	}
	if _, e.err = wasixInstantiate(ctx, e.rt); e.err != nil {
		return e
	}
	e.code, e.err = e.rt.CompileModule(ctx, wasmModule)
	return e
}

// instance is one instance of the module with the functions called.
type instance struct {
	mem                                            api.Memory
	malloc, free, scan, freeScan, parse, freeParse api.Function
}

func (e *engine) get() (*instance, error) {
	if e.err != nil {
		return nil, fmt.Errorf("WebAssembly PostgreSQL parser: %w", e.err)
	}
	e.mu.Lock()
	if n := len(e.idle); n > 0 {
		in := e.idle[n-1]
		e.idle = e.idle[:n-1]
		e.mu.Unlock()
		return in, nil
	}
	e.mu.Unlock()
	// The module's memory is shared (it has threads), so it never moves:
	// reserved, not allocated, up to its maximum, as go-pgquery does.
	ctx := experimental.WithMemoryAllocator(context.Background(), allocator.NewNonMoving())
	// Anonymous, so that the runtime holds as many as run at once; its
	// output (none expected) is discarded, as go vet's stdout is its
	// protocol.
	cfg := wazero.NewModuleConfig().WithName("").WithSysNanotime().WithStartFunctions("_initialize")
	mod, err := e.rt.InstantiateModule(ctx, e.code, cfg)
	if err != nil {
		return nil, fmt.Errorf("WebAssembly PostgreSQL parser: %w", err)
	}
	in := &instance{
		mem:       mod.Memory(),
		malloc:    mod.ExportedFunction("malloc"),
		free:      mod.ExportedFunction("free"),
		scan:      mod.ExportedFunction("pg_query_scan"),
		freeScan:  mod.ExportedFunction("pg_query_free_scan_result"),
		parse:     mod.ExportedFunction("pg_query_parse_protobuf"),
		freeParse: mod.ExportedFunction("pg_query_free_protobuf_parse_result"),
	}
	if _, err := mod.ExportedFunction("pg_query_init").Call(wasixContext()); err != nil {
		return nil, fmt.Errorf("WebAssembly PostgreSQL parser: %w", err)
	}
	return in, nil
}

func (e *engine) put(in *instance) {
	e.mu.Lock()
	e.idle = append(e.idle, in)
	e.mu.Unlock()
}

var errMemory = errors.New("WebAssembly PostgreSQL parser: read outside its memory")

// call runs fn (pg_query_scan or pg_query_parse_protobuf, whose results
// have the same layout: the protocol buffer's length and address, the
// stderr buffer, the error) on sql and returns the protocol buffer. An
// instance whose call failed (a trap: the C stack ran out) is dropped,
// since its memory may be left inconsistent.
func (e *engine) call(sql string, pick func(*instance) (fn, free api.Function)) ([]byte, error) {
	in, err := e.get()
	if err != nil {
		return nil, err
	}
	out, err := in.call(sql, pick)
	if err == nil || errors.As(err, new(*parseError)) {
		e.put(in)
	}
	return out, err
}

func (in *instance) call(sql string, pick func(*instance) (fn, free api.Function)) (out []byte, err error) {
	ctx := wasixContext()
	fn, free := pick(in)
	// The input, NUL-terminated.
	r, err := in.malloc.Call(ctx, uint64(len(sql)+1))
	if err != nil {
		return nil, err
	}
	input := uint32(r[0])
	defer in.free.Call(ctx, uint64(input))
	if !in.mem.WriteString(input, sql) || !in.mem.WriteByte(input+uint32(len(sql)), 0) {
		return nil, errMemory
	}
	// The result, 16 bytes, returned through a pointer.
	if r, err = in.malloc.Call(ctx, 16); err != nil {
		return nil, err
	}
	res := uint32(r[0])
	defer in.free.Call(ctx, uint64(res))
	if _, err := fn.Call(ctx, uint64(res), uint64(input)); err != nil {
		return nil, err
	}
	defer free.Call(ctx, uint64(res))
	buf, ok := in.mem.Read(res, 16)
	if !ok {
		return nil, errMemory
	}
	if e := binary.LittleEndian.Uint32(buf[12:]); e != 0 {
		return nil, in.error(e)
	}
	data, ok := in.mem.Read(binary.LittleEndian.Uint32(buf[4:]), binary.LittleEndian.Uint32(buf))
	if !ok {
		return nil, errMemory
	}
	return append([]byte(nil), data...), nil
}

// error reads a PgQueryError: its message first, its cursor position
// (characters from 1) fifth.
func (in *instance) error(at uint32) error {
	msg, ok := in.cstring(at)
	pos, ok2 := in.mem.ReadUint32Le(at + 16)
	if !ok || !ok2 {
		return errMemory
	}
	return &parseError{Message: msg, Cursorpos: int(pos)}
}

// cstring reads the NUL-terminated string whose address is at ptrptr.
func (in *instance) cstring(ptrptr uint32) (string, bool) {
	ptr, ok := in.mem.ReadUint32Le(ptrptr)
	if !ok || ptr == 0 {
		return "", ok
	}
	end := ptr
	for {
		b, ok := in.mem.ReadByte(end)
		if !ok {
			return "", false
		}
		if b == 0 {
			break
		}
		end++
	}
	s, ok := in.mem.Read(ptr, end-ptr)
	return string(s), ok
}

func scan(sql string) (*pg_query.ScanResult, error) {
	buf, err := theEngine().call(sql, func(in *instance) (api.Function, api.Function) { return in.scan, in.freeScan })
	if err != nil {
		return nil, err
	}
	r := new(pg_query.ScanResult)
	return r, proto.Unmarshal(buf, r)
}

func parse(sql string) (*pg_query.ParseResult, error) {
	buf, err := theEngine().call(sql, func(in *instance) (api.Function, api.Function) { return in.parse, in.freeParse })
	if err != nil {
		return nil, err
	}
	r := new(pg_query.ParseResult)
	return r, proto.Unmarshal(buf, r)
}
