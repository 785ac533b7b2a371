package checkpoint

import (
	"bytes"
	"context"
	"fmt"
	"hash/fnv"
	iofs "io/fs"
	"strconv"
	"strings"
	"sync"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/attdigest"
)

// A manifest is stored as a root object that names chunks, each a run of
// entries in tree order, so that a change to one file stores one new
// chunk and a new root rather than the whole listing again. Chunk
// boundaries depend on the paths alone (a chunk ends after an entry
// whose path hashes to 0 modulo chunkDivisor, or at maxChunkEntries), so
// an added or removed file shifts no other chunk.
//
// Both are text, one record a line:
//
//	harness-checkpoint 1
//	sha256:<hex> <entries>              one line per chunk
//
//	harness-checkpoint-chunk 1
//	<kind> <mode> <size> <hex|-> <kept> <mtime> <ctime> <ino> <dev> <path> [<target>]
//
// kind is f, d or l; mode is octal; hex is the content's SHA-256 (- for
// none); kept is k for content kept in the store under its digest,
// p:<hex>:<offset> for content kept at that offset of a pack (the
// contents of small files, concatenated, stored as one object), or -;
// path and target are Go quoted strings.
//
// A tree whose entries fit in one chunk is stored as that chunk alone:
// the manifest's digest is the chunk's, and no root is written. Most
// workspaces are such trees (a chunk holds 256 entries on average), so
// their checkpoints store one manifest object rather than two.
const (
	rootMagic  = "harness-checkpoint 1\n"
	chunkMagic = "harness-checkpoint-chunk 1\n"

	chunkDivisor    = 256
	maxChunkEntries = 4096
	// maxObjectSize bounds a manifest object read back.
	maxObjectSize = 64 << 20
)

// chunkEnds reports whether a chunk ends after the entry at path.
func chunkEnds(path string, n int) bool {
	if n >= maxChunkEntries {
		return true
	}
	h := fnv.New32a()
	h.Write([]byte(path))
	return h.Sum32()%chunkDivisor == 0
}

// chunks splits entries into chunks.
func chunks(entries []Entry) [][]Entry {
	var out [][]Entry
	start := 0
	for i := range entries {
		if chunkEnds(entries[i].Path, i+1-start) {
			out = append(out, entries[start:i+1])
			start = i + 1
		}
	}
	if start < len(entries) {
		out = append(out, entries[start:])
	}
	return out
}

// appendEntry appends the line of e.
func appendEntry(b []byte, e *Entry) []byte {
	b = append(b, byte(e.Kind), ' ')
	b = strconv.AppendUint(b, uint64(e.Mode.Perm()), 8)
	b = append(b, ' ')
	b = strconv.AppendInt(b, e.Size, 10)
	b = append(b, ' ')
	if e.Digest != "" {
		b = append(b, strings.TrimPrefix(e.Digest, attdigest.Prefix)...)
	} else {
		b = append(b, '-')
	}
	switch {
	case e.Kept && e.Pack != "":
		b = append(b, " p:"...)
		b = append(b, strings.TrimPrefix(e.Pack, attdigest.Prefix)...)
		b = append(b, ':')
		b = strconv.AppendInt(b, e.Offset, 10)
		b = append(b, ' ')
	case e.Kept:
		b = append(b, " k "...)
	default:
		b = append(b, " - "...)
	}
	b = strconv.AppendInt(b, e.Stat.MtimeNS, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, e.Stat.CtimeNS, 10)
	b = append(b, ' ')
	b = strconv.AppendUint(b, e.Stat.Ino, 10)
	b = append(b, ' ')
	b = strconv.AppendUint(b, e.Stat.Dev, 10)
	b = append(b, ' ')
	b = strconv.AppendQuote(b, e.Path)
	if e.Kind == KindSymlink {
		b = append(b, ' ')
		b = strconv.AppendQuote(b, e.Target)
	}
	return append(b, '\n')
}

// encodeChunk returns the bytes of a chunk object.
func encodeChunk(entries []Entry) []byte {
	b := make([]byte, 0, len(chunkMagic)+len(entries)*160)
	b = append(b, chunkMagic...)
	for i := range entries {
		b = appendEntry(b, &entries[i])
	}
	return b
}

// chunkRef is one line of a root object.
type chunkRef struct {
	digest string
	n      int
}

func encodeRoot(refs []chunkRef) []byte {
	b := make([]byte, 0, len(rootMagic)+len(refs)*80)
	b = append(b, rootMagic...)
	for _, r := range refs {
		b = append(b, r.digest...)
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(r.n), 10)
		b = append(b, '\n')
	}
	return b
}

// manifestErr is the error of a manifest that does not parse: it
// matches harness.CodeCorruptAttachment.
func manifestErr(format string, args ...any) error {
	return &harness.Error{Code: harness.CodeCorruptAttachment, Message: "checkpoint: manifest: " + fmt.Sprintf(format, args...)}
}

// parseRoot parses a root object.
func parseRoot(data []byte) ([]chunkRef, error) {
	rest, ok := bytes.CutPrefix(data, []byte(rootMagic))
	if !ok {
		return nil, manifestErr("not a checkpoint manifest")
	}
	var refs []chunkRef
	for len(rest) > 0 {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			return nil, manifestErr("unterminated line")
		}
		line := string(rest[:i])
		rest = rest[i+1:]
		d, n, ok := strings.Cut(line, " ")
		if !ok || !attdigest.Valid(d) {
			return nil, manifestErr("bad chunk line %q", line)
		}
		count, err := strconv.Atoi(n)
		if err != nil || count <= 0 || count > maxChunkEntries || strconv.Itoa(count) != n {
			return nil, manifestErr("bad chunk size in %q", line)
		}
		refs = append(refs, chunkRef{digest: d, n: count})
	}
	return refs, nil
}

// parseChunk parses a chunk object. Each path must be valid and come
// after the one before (after is the last path of the previous chunk, or
// "").
func parseChunk(data []byte, after string) ([]Entry, error) {
	rest, ok := bytes.CutPrefix(data, []byte(chunkMagic))
	if !ok {
		return nil, manifestErr("not a manifest chunk")
	}
	var out []Entry
	prev := after
	for len(rest) > 0 {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			return nil, manifestErr("unterminated line")
		}
		e, err := parseEntry(string(rest[:i]))
		if err != nil {
			return nil, err
		}
		rest = rest[i+1:]
		if prev != "" && ComparePaths(prev, e.Path) >= 0 {
			return nil, manifestErr("%q is out of order after %q", e.Path, prev)
		}
		if prev == "" && len(out) > 0 {
			return nil, manifestErr("%q is out of order", e.Path)
		}
		prev = e.Path
		out = append(out, e)
	}
	if len(out) == 0 {
		return nil, manifestErr("empty chunk")
	}
	return out, nil
}

// parseEntry parses one entry line.
func parseEntry(line string) (Entry, error) {
	bad := func(what string) (Entry, error) {
		return Entry{}, manifestErr("%s in %q", what, line)
	}
	var f [9]string
	rest := line
	for i := range f {
		var ok bool
		f[i], rest, ok = strings.Cut(rest, " ")
		if !ok || f[i] == "" {
			return bad("missing field")
		}
	}
	var e Entry
	switch f[0] {
	case "f":
		e.Kind = KindFile
	case "d":
		e.Kind = KindDir
	case "l":
		e.Kind = KindSymlink
	default:
		return bad("unknown kind")
	}
	mode, err := strconv.ParseUint(f[1], 8, 32)
	if err != nil || mode > uint64(iofs.ModePerm) || strconv.FormatUint(mode, 8) != f[1] {
		return bad("bad mode")
	}
	e.Mode = iofs.FileMode(mode)
	if e.Size, err = parseInt(f[2]); err != nil || e.Size < 0 {
		return bad("bad size")
	}
	switch {
	case f[3] == "-":
	case e.Kind == KindFile && attdigest.Valid(attdigest.Prefix+f[3]):
		e.Digest = attdigest.Prefix + f[3]
	default:
		return bad("bad digest")
	}
	switch k := f[4]; {
	case k == "k":
		if e.Digest == "" {
			return bad("content kept without a digest")
		}
		e.Kept = true
	case strings.HasPrefix(k, "p:"):
		pack, off, ok := strings.Cut(k[2:], ":")
		if !ok || e.Digest == "" || !attdigest.Valid(attdigest.Prefix+pack) {
			return bad("bad pack")
		}
		if e.Offset, err = parseInt(off); err != nil || e.Offset < 0 {
			return bad("bad pack offset")
		}
		e.Kept, e.Pack = true, attdigest.Prefix+pack
	case k == "-":
	default:
		return bad("bad kept flag")
	}
	if e.Stat.MtimeNS, err = parseInt(f[5]); err != nil {
		return bad("bad mtime")
	}
	if e.Stat.CtimeNS, err = parseInt(f[6]); err != nil {
		return bad("bad ctime")
	}
	if e.Stat.Ino, err = parseUint(f[7]); err != nil {
		return bad("bad inode")
	}
	if e.Stat.Dev, err = parseUint(f[8]); err != nil {
		return bad("bad device")
	}
	p, rest, err := unquotePrefix(rest)
	if err != nil {
		return bad("bad path")
	}
	if !validPath(p) {
		return bad("invalid path")
	}
	e.Path = p
	if e.Kind == KindSymlink {
		rest, ok := strings.CutPrefix(rest, " ")
		if !ok {
			return bad("missing link target")
		}
		target, tail, err := unquotePrefix(rest)
		if err != nil || tail != "" || target == "" || strings.IndexByte(target, 0) >= 0 {
			return bad("bad link target")
		}
		e.Target = target
	} else if rest != "" {
		return bad("trailing text")
	}
	if e.Kind == KindDir && (e.Size != 0 || e.Digest != "") {
		return bad("directory with content")
	}
	return e, nil
}

func parseInt(s string) (int64, error) {
	v, err := strconv.ParseInt(s, 10, 64)
	if err == nil && strconv.FormatInt(v, 10) != s {
		err = strconv.ErrSyntax
	}
	return v, err
}

func parseUint(s string) (uint64, error) {
	v, err := strconv.ParseUint(s, 10, 64)
	if err == nil && strconv.FormatUint(v, 10) != s {
		err = strconv.ErrSyntax
	}
	return v, err
}

// unquotePrefix reads a Go quoted string at the start of s and returns it
// and what follows.
func unquotePrefix(s string) (string, string, error) {
	q, err := strconv.QuotedPrefix(s)
	if err != nil || !strings.HasPrefix(q, `"`) {
		return "", "", strconv.ErrSyntax
	}
	v, err := strconv.Unquote(q)
	if err != nil {
		return "", "", err
	}
	return v, s[len(q):], nil
}

// validPath reports whether p can name an entry: a clean, relative,
// slash-separated path of at most 4096 bytes, without "", "." or ".."
// elements, without NUL bytes, and without a ".git" element (never
// recorded). Names need not be UTF-8: any bytes but '/' and NUL make a
// name, as on Unix.
func validPath(p string) bool {
	if p == "" || len(p) > 4096 || strings.IndexByte(p, 0) >= 0 {
		return false
	}
	for name := range strings.SplitSeq(p, "/") {
		if name == "" || name == "." || name == ".." || name == ".git" {
			return false
		}
	}
	return true
}

// objects caches parsed chunks by digest, so that the manifests of a
// session, which share most chunks, are parsed once each.
type objects struct {
	store Store
	// stage says puts go to the store's Stage (a Stager), so that they
	// are synced together; staged says some were since the last sync.
	// Both belong to the Workspace's lock.
	stage, staged bool

	mu    sync.Mutex
	cache map[string][]Entry
	packs map[string][]byte // recently read packs, by digest
}

// put stores data: staged when o.stage is set and the store can stage.
func (o *objects) put(ctx context.Context, data []byte) (string, error) {
	if st, ok := o.store.(Stager); ok && o.stage {
		o.staged = true
		return st.Stage(ctx, data)
	}
	return o.store.Put(ctx, data)
}

// sync makes what was staged durable.
func (o *objects) sync(ctx context.Context) error {
	if !o.staged {
		return nil
	}
	if err := o.store.(Stager).Sync(ctx); err != nil {
		return fmt.Errorf("checkpoint: syncing the stored checkpoint: %w", err)
	}
	o.staged = false
	return nil
}

// maxCachedChunks bounds the chunk cache; past it the cache starts over.
const maxCachedChunks = 4096

// maxCachedPacks bounds the packs kept in memory while contents are read.
const maxCachedPacks = 4

// content returns the kept content of a file entry, verified against its
// digest.
func (o *objects) content(ctx context.Context, e *Entry) ([]byte, error) {
	if !e.Kept {
		return nil, &harness.Error{Code: harness.CodeNotFound, Message: "checkpoint: the content of " + e.Path + " was not kept"}
	}
	var data []byte
	if e.Pack == "" {
		d, err := o.store.Get(ctx, e.Digest)
		if err != nil {
			return nil, err
		}
		data = d
	} else {
		o.mu.Lock()
		pack, ok := o.packs[e.Pack]
		o.mu.Unlock()
		if !ok {
			p, err := o.store.Get(ctx, e.Pack)
			if err != nil {
				return nil, err
			}
			pack = p
			o.mu.Lock()
			if o.packs == nil || len(o.packs) >= maxCachedPacks {
				o.packs = map[string][]byte{}
			}
			o.packs[e.Pack] = pack
			o.mu.Unlock()
		}
		if e.Offset > int64(len(pack)) || e.Size > int64(len(pack))-e.Offset {
			return nil, &harness.Error{Code: harness.CodeCorruptAttachment, Message: fmt.Sprintf("checkpoint: the pack %s is too short for %s", e.Pack, e.Path)}
		}
		data = pack[e.Offset : e.Offset+e.Size : e.Offset+e.Size]
	}
	if int64(len(data)) != e.Size || attdigest.Of(data) != e.Digest {
		return nil, &harness.Error{Code: harness.CodeCorruptAttachment, Message: fmt.Sprintf("checkpoint: the stored content of %s does not match its digest", e.Path)}
	}
	return data, nil
}

func (o *objects) chunk(ctx context.Context, ref chunkRef, after string) ([]Entry, error) {
	o.mu.Lock()
	es, ok := o.cache[ref.digest]
	o.mu.Unlock()
	if ok && len(es) == ref.n && (after == "" || ComparePaths(after, es[0].Path) < 0) {
		return es, nil
	}
	data, err := o.store.Get(ctx, ref.digest)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: reading manifest chunk %s: %w", ref.digest, err)
	}
	if len(data) > maxObjectSize {
		return nil, manifestErr("chunk %s is %d bytes", ref.digest, len(data))
	}
	if es, err = parseChunk(data, after); err != nil {
		return nil, err
	}
	if len(es) != ref.n {
		return nil, manifestErr("chunk %s holds %d entries, the root says %d", ref.digest, len(es), ref.n)
	}
	o.remember(ref.digest, es)
	return es, nil
}

// parseManifest parses a manifest object: a root naming its chunks, or
// the one chunk of a small tree, whose entries it returns.
func parseManifest(data []byte) ([]chunkRef, []Entry, error) {
	if !bytes.HasPrefix(data, []byte(chunkMagic)) {
		refs, err := parseRoot(data)
		return refs, nil, err
	}
	es, err := parseChunk(data, "")
	if err != nil {
		return nil, nil, err
	}
	if len(es) == 0 || len(es) > maxChunkEntries {
		return nil, nil, manifestErr("a manifest of one chunk holds %d entries", len(es))
	}
	return nil, es, nil
}

// load reads the tree of a manifest.
func (o *objects) load(ctx context.Context, digest string) (*Tree, error) {
	if !attdigest.Valid(digest) {
		return nil, &harness.Error{Code: harness.CodeInvalidDigest, Message: fmt.Sprintf("checkpoint: %q is not a manifest digest", digest)}
	}
	data, err := o.store.Get(ctx, digest)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: reading manifest %s: %w", digest, err)
	}
	refs, single, err := parseManifest(data)
	if err != nil {
		return nil, err
	}
	if single != nil {
		if err := checkParents(single); err != nil {
			return nil, err
		}
		o.remember(digest, single)
		return newTree(single), nil
	}
	total := 0
	for _, r := range refs {
		total += r.n
	}
	entries := make([]Entry, 0, total)
	after := ""
	for _, r := range refs {
		es, err := o.chunk(ctx, r, after)
		if err != nil {
			return nil, err
		}
		entries = append(entries, es...)
		after = es[len(es)-1].Path
	}
	if err := checkParents(entries); err != nil {
		return nil, err
	}
	return newTree(entries), nil
}

// checkParents checks that every entry's directory is an entry of the
// tree, listed before it.
func checkParents(entries []Entry) error {
	var dirs []string // the directories enclosing the current entry
	for i := range entries {
		p := entries[i].Path
		parent := ""
		if j := strings.LastIndexByte(p, '/'); j >= 0 {
			parent = p[:j]
		}
		for len(dirs) > 0 && dirs[len(dirs)-1] != parent {
			dirs = dirs[:len(dirs)-1]
		}
		if parent != "" && len(dirs) == 0 {
			return manifestErr("%q is listed without its directory", p)
		}
		if entries[i].Kind == KindDir {
			dirs = append(dirs, p)
		}
	}
	return nil
}

// remember caches the parsed entries of the chunk stored under digest.
func (o *objects) remember(digest string, es []Entry) {
	o.mu.Lock()
	if o.cache == nil || len(o.cache) >= maxCachedChunks {
		o.cache = map[string][]Entry{}
	}
	o.cache[digest] = es
	o.mu.Unlock()
}

// save writes a tree's chunks and root, skipping chunks known to be
// stored, and returns the manifest's digest: the root's, or the chunk's
// for a tree of one chunk, which is stored without a root.
func (o *objects) save(ctx context.Context, t *Tree) (string, error) {
	cs := chunks(t.entries)
	var refs []chunkRef
	for _, c := range cs {
		data := encodeChunk(c)
		d := attdigest.Of(data)
		o.mu.Lock()
		_, known := o.cache[d]
		o.mu.Unlock()
		if !known {
			got, err := o.put(ctx, data)
			if err != nil {
				return "", fmt.Errorf("checkpoint: storing a manifest chunk: %w", err)
			}
			if got != d {
				return "", manifestErr("the store returned digest %s for a chunk whose digest is %s", got, d)
			}
			o.remember(d, c)
		}
		refs = append(refs, chunkRef{digest: d, n: len(c)})
	}
	if len(refs) == 1 {
		return refs[0].digest, nil
	}
	root := encodeRoot(refs)
	d, err := o.put(ctx, root)
	if err != nil {
		return "", fmt.Errorf("checkpoint: storing a manifest: %w", err)
	}
	return d, nil
}
