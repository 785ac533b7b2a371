package schemaguard

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// Defaults of Limits.
const (
	// DefaultMaxNesting bounds how deeply the schema's JSON text nests
	// (objects and arrays). Real tool schemas nest a dozen levels at most.
	DefaultMaxNesting = 64
	// DefaultMaxPatternBytes bounds the length of one regular expression
	// (pattern, a patternProperties key).
	DefaultMaxPatternBytes = 1024
	// DefaultMaxPatternInsts bounds the size of one regular expression
	// once compiled, estimated from its syntax: a match costs time in
	// proportion to the text's length times this size.
	DefaultMaxPatternInsts = 10_000
	// DefaultMaxExpansion bounds the number of schemas applied to one
	// value through $ref, allOf, anyOf, oneOf, not, if/then/else and
	// dependent schemas, counting each path through them.
	DefaultMaxExpansion = 1000
	// DefaultMaxDepth bounds the recursion of one check: each schema
	// applied, to a value or to a part of it, is one level.
	DefaultMaxDepth = 512
	// DefaultMaxWork bounds the work of one check. A schema applied to a
	// value costs its depth in the recursion (see Schema.Validate), an
	// enum value compared one, and a pattern matched about one per 100
	// steps of the match; at the bound a check takes about 0.1 s and
	// allocates about 50 MB in the worst case.
	DefaultMaxWork = 1 << 19
)

// Limits bound what Compile accepts and what Validate spends. A zero
// field means its default.
type Limits struct {
	MaxNesting      int
	MaxPatternBytes int
	MaxPatternInsts int
	MaxExpansion    int
	MaxDepth        int
	MaxWork         int64
}

func (l Limits) withDefaults() Limits {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.MaxNesting, DefaultMaxNesting)
	def(&l.MaxPatternBytes, DefaultMaxPatternBytes)
	def(&l.MaxPatternInsts, DefaultMaxPatternInsts)
	def(&l.MaxExpansion, DefaultMaxExpansion)
	def(&l.MaxDepth, DefaultMaxDepth)
	if l.MaxWork <= 0 {
		l.MaxWork = DefaultMaxWork
	}
	return l
}

// Kinds of Error.
const (
	// KindInvalid: not JSON, not a JSON Schema, or it does not resolve.
	KindInvalid = "invalid"
	// KindNesting: the text nests deeper than Limits.MaxNesting.
	KindNesting = "nesting"
	// KindPattern: a regular expression is too long or too large.
	KindPattern = "pattern"
	// KindCycle: schemas apply each other to the same value in a cycle.
	KindCycle = "cycle"
	// KindExpansion: too many schemas apply to one value.
	KindExpansion = "expansion"
)

// Error is a schema Compile refuses.
type Error struct {
	// Kind says what is wrong: KindInvalid, KindNesting, KindPattern,
	// KindCycle or KindExpansion.
	Kind string
	// At is the JSON Pointer (as a URI fragment, "#/$defs/a") of the
	// schema the problem is in, when there is one.
	At string
	// Cycle, for KindCycle, lists the schemas around the cycle as URI
	// fragments, the first repeated at the end.
	Cycle []string
	// Msg describes the problem.
	Msg string
	// Err is the cause, for KindInvalid.
	Err error
}

func (e *Error) Error() string { return e.Msg }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// LimitError is a value Validate refuses to check: checking it would go
// deeper or cost more than the limits allow.
type LimitError struct {
	// Depth reports that the recursion bound was reached (otherwise the
	// work bound was).
	Depth bool
	// Limit is the bound that was reached.
	Limit int64
}

func (e *LimitError) Error() string {
	if e.Depth {
		return fmt.Sprintf("the value is nested too deeply to check against its schema (more than %d levels of schemas)", e.Limit)
	}
	return fmt.Sprintf("the value is too large to check against its schema (the check would apply more than %d schemas)", e.Limit)
}

// Schema is a resolved schema that is safe to check values against.
type Schema struct {
	res  *jsonschema.Resolved
	root *node
	lim  Limits
	// fast is the schema for the fast check, nil when it uses keywords
	// the fast check does not model.
	fast *fastNode
}

// Resolved returns the schema as jsonschema-go resolved it.
func (s *Schema) Resolved() *jsonschema.Resolved { return s.res }

// Source returns the schema as decoded.
func (s *Schema) Source() *jsonschema.Schema { return s.root.s }

// node is one schema of the tree and the schemas its keywords apply.
type node struct {
	s    *jsonschema.Schema
	path string // JSON Pointer from the root; "" for the root

	base    *node
	uri     *url.URL             // set on bases: the root and schemas with an $id
	anchors map[string]anchorRef // on bases

	// inPlace are the schemas applied to the same value.
	inPlace []*node
	// The schemas applied to parts of the value.
	props       map[string]*node
	patterns    []pattern
	additional  *node // additionalProperties
	names       *node // propertyNames
	unevalProps *node
	prefix      []*node // prefixItems (draft 2020-12) or items as an array (draft-07)
	items       *node   // items (a single schema)
	moreItems   *node   // additionalItems (draft-07)
	contains    *node
	unevalItems *node

	enum        int // values in enum
	patternSize int // estimated instructions of pattern; 0 without one
	unique      bool
}

type pattern struct {
	size int
	n    *node
}

type anchorRef struct {
	n       *node
	dynamic bool
}

func (n *node) fragment() string { return "#" + n.path }

// The $schema values of draft-07, as jsonschema-go knows them.
var draft7IDs = []string{"http://json-schema.org/draft-07/schema#", "https://json-schema.org/draft-07/schema#"}

// Compile decodes raw, checks it against lim, resolves it with
// jsonschema-go and builds the graph of its schemas. A problem is an
// *Error.
func Compile(raw []byte, lim Limits) (*Schema, error) {
	lim = lim.withDefaults()
	if d := nesting(raw); d > lim.MaxNesting {
		return nil, &Error{Kind: KindNesting, Msg: fmt.Sprintf("the schema nests %d levels deep, more than the %d allowed", d, lim.MaxNesting)}
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, &Error{Kind: KindInvalid, Err: err, Msg: fmt.Sprintf("the schema is not valid JSON Schema: %v", err)}
	}
	b := &builder{lim: lim, nodes: map[*jsonschema.Schema]*node{}, uris: map[string]*node{}}
	b.draft7 = slices.Contains(draft7IDs, s.Schema)
	root, err := b.tree(&s, "")
	if err != nil {
		return nil, err
	}
	// Patterns are checked above, before jsonschema-go compiles them.
	res, err := s.Resolve(nil)
	if err != nil {
		return nil, &Error{Kind: KindInvalid, Err: err, Msg: fmt.Sprintf("the schema does not resolve: %v", err)}
	}
	root.uri = &url.URL{}
	b.uris[""] = root
	if err := b.bases(root, root); err != nil {
		return nil, err
	}
	for _, n := range b.order {
		if err := b.edges(n); err != nil {
			return nil, err
		}
	}
	if err := b.checkGraph(root); err != nil {
		return nil, err
	}
	return &Schema{res: res, root: root, lim: lim, fast: compileFast(&s)}, nil
}

// nesting returns how deeply the JSON text nests, counting objects and
// arrays outside strings.
func nesting(raw []byte) int {
	depth, most := 0, 0
	in, esc := false, false
	for _, c := range raw {
		switch {
		case in:
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				in = false
			}
		case c == '"':
			in = true
		case c == '{' || c == '[':
			depth++
			most = max(most, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return most
}

type builder struct {
	lim    Limits
	draft7 bool
	nodes  map[*jsonschema.Schema]*node
	order  []*node // every node, in tree order
	uris   map[string]*node
}

// child is one schema-valued field of a schema, with its JSON Pointer
// segments.
type child struct {
	seg string
	s   *jsonschema.Schema
}

// children lists the schemas directly under s, in a fixed order, with the
// JSON Pointer suffix of each.
func children(s *jsonschema.Schema) []child {
	var out []child
	one := func(name string, c *jsonschema.Schema) {
		if c != nil {
			out = append(out, child{"/" + name, c})
		}
	}
	list := func(name string, cs []*jsonschema.Schema) {
		for i, c := range cs {
			if c != nil {
				out = append(out, child{"/" + name + "/" + strconv.Itoa(i), c})
			}
		}
	}
	dict := func(name string, m map[string]*jsonschema.Schema) {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if m[k] != nil {
				out = append(out, child{"/" + name + "/" + escape(k), m[k]})
			}
		}
	}
	dict("$defs", s.Defs)
	dict("definitions", s.Definitions)
	dict("dependencies", s.DependencySchemas)
	one("additionalItems", s.AdditionalItems)
	one("additionalProperties", s.AdditionalProperties)
	list("allOf", s.AllOf)
	list("anyOf", s.AnyOf)
	one("contains", s.Contains)
	one("contentSchema", s.ContentSchema)
	dict("dependentSchemas", s.DependentSchemas)
	one("else", s.Else)
	one("if", s.If)
	one("items", s.Items)
	list("items", s.ItemsArray)
	one("not", s.Not)
	list("oneOf", s.OneOf)
	dict("patternProperties", s.PatternProperties)
	list("prefixItems", s.PrefixItems)
	dict("properties", s.Properties)
	one("propertyNames", s.PropertyNames)
	one("then", s.Then)
	one("unevaluatedItems", s.UnevaluatedItems)
	one("unevaluatedProperties", s.UnevaluatedProperties)
	return out
}

var (
	pointerEscaper   = strings.NewReplacer("~", "~0", "/", "~1")
	pointerUnescaper = strings.NewReplacer("~1", "/", "~0", "~")
)

func escape(s string) string { return pointerEscaper.Replace(s) }

// tree makes the nodes of s and everything under it, checking patterns
// on the way. Its recursion is bounded by the nesting of the text.
func (b *builder) tree(s *jsonschema.Schema, path string) (*node, error) {
	if _, seen := b.nodes[s]; seen {
		return nil, &Error{Kind: KindInvalid, At: "#" + path, Msg: fmt.Sprintf("the schema at #%s appears twice in the tree", path)}
	}
	n := &node{s: s, path: path, enum: len(s.Enum), unique: s.UniqueItems}
	b.nodes[s] = n
	b.order = append(b.order, n)
	if s.Pattern != "" {
		size, err := b.checkPattern(s.Pattern, "#"+path+"/pattern")
		if err != nil {
			return nil, err
		}
		n.patternSize = size
	}
	for _, c := range children(s) {
		if _, err := b.tree(c.s, path+c.seg); err != nil {
			return nil, err
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.PatternProperties)) {
		size, err := b.checkPattern(k, "#"+path+"/patternProperties")
		if err != nil {
			return nil, err
		}
		if c := s.PatternProperties[k]; c != nil {
			n.patterns = append(n.patterns, pattern{size: size, n: b.nodes[c]})
		}
	}
	return n, nil
}

// checkPattern checks the length and the estimated compiled size of a
// regular expression, and returns the size.
func (b *builder) checkPattern(p, at string) (int, error) {
	if len(p) > b.lim.MaxPatternBytes {
		return 0, &Error{Kind: KindPattern, At: at, Msg: fmt.Sprintf("the regular expression at %s is %d bytes long, more than the %d allowed", at, len(p), b.lim.MaxPatternBytes)}
	}
	re, err := syntax.Parse(p, syntax.Perl)
	if err != nil {
		return 0, &Error{Kind: KindInvalid, At: at, Err: err, Msg: fmt.Sprintf("the regular expression at %s does not compile: %v", at, err)}
	}
	size := progSize(re, b.lim.MaxPatternInsts+1)
	if size > b.lim.MaxPatternInsts {
		return 0, &Error{Kind: KindPattern, At: at, Msg: fmt.Sprintf("the regular expression at %s compiles to more than %d instructions (counted repetitions make it large); use a smaller one", at, b.lim.MaxPatternInsts)}
	}
	return max(size, 1), nil
}

// progSize estimates the number of instructions re compiles to, as
// regexp/syntax would after simplifying it, stopping at limit.
func progSize(re *syntax.Regexp, limit int) int {
	sub := func() int {
		n := 0
		for _, s := range re.Sub {
			n += progSize(s, limit)
			if n >= limit {
				return limit
			}
		}
		return n
	}
	switch re.Op {
	case syntax.OpLiteral:
		return max(len(re.Rune), 1)
	case syntax.OpConcat, syntax.OpAlternate:
		return min(sub()+len(re.Sub), limit)
	case syntax.OpCapture:
		return min(sub()+2, limit)
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest:
		return min(sub()+1, limit)
	case syntax.OpRepeat:
		// x{n,m} simplifies to n copies of x and m-n optional ones;
		// x{n,} to n copies and a star.
		one := max(sub(), 1)
		copies, optional := re.Min, 1
		if re.Max > re.Min {
			optional = re.Max - re.Min
		}
		n := copies + optional
		if one+1 > limit/max(n, 1) {
			return limit
		}
		return min(copies*one+optional*(one+1), limit)
	}
	return 1
}

// bases mirrors jsonschema-go's resolution of $id and anchors: each
// schema's base (the nearest enclosing schema with an $id, or the root),
// the URIs of bases, and the anchors of each base.
func (b *builder) bases(n, base *node) error {
	s := n.s
	if s.ID != "" && !(b.draft7 && s.Ref != "") {
		id, err := url.Parse(s.ID)
		if err != nil {
			return &Error{Kind: KindInvalid, At: n.fragment(), Err: err, Msg: fmt.Sprintf("the $id at %s is not a URI: %v", n.fragment(), err)}
		}
		if b.draft7 && id.Fragment != "" {
			b.setAnchor(base, strings.TrimPrefix(s.ID, "#"), n, false)
		} else {
			n.uri = base.uri.ResolveReference(id)
			b.uris[n.uri.String()] = n
			base = n
		}
	}
	n.base = base
	if !b.draft7 {
		b.setAnchor(base, s.Anchor, n, false)
		b.setAnchor(base, s.DynamicAnchor, n, true)
	}
	for _, c := range children(s) {
		if err := b.bases(b.nodes[c.s], base); err != nil {
			return err
		}
	}
	return nil
}

func (b *builder) setAnchor(base *node, name string, n *node, dynamic bool) {
	if name == "" {
		return
	}
	if base.anchors == nil {
		base.anchors = map[string]anchorRef{}
	}
	if _, dup := base.anchors[name]; !dup {
		base.anchors[name] = anchorRef{n, dynamic}
	}
}

// resolve finds the schema a $ref or $dynamicRef of n names, as
// jsonschema-go does; dynamic is the anchor name when the reference is
// resolved at validation time.
func (b *builder) resolve(n *node, ref string) (target *node, dynamic string, err error) {
	fail := func(why string) (*node, string, error) {
		return nil, "", &Error{Kind: KindInvalid, At: n.fragment(), Msg: fmt.Sprintf("the reference %q at %s cannot be followed: %s", ref, n.fragment(), why)}
	}
	u, err := url.Parse(ref)
	if err != nil {
		return fail(err.Error())
	}
	u = n.base.uri.ResolveReference(u)
	doc := *u
	doc.Fragment = ""
	d := b.uris[doc.String()]
	if d == nil {
		return fail("it names no schema of this document")
	}
	frag := u.Fragment
	if frag != "" && !strings.HasPrefix(frag, "/") {
		a, ok := d.anchors[frag]
		if !ok {
			return fail("no such anchor")
		}
		if a.dynamic {
			return a.n, frag, nil
		}
		return a.n, "", nil
	}
	t, why := b.pointer(d, frag)
	if t == nil {
		return fail(why)
	}
	return t, "", nil
}

// pointer follows a JSON Pointer from n through schema-valued keywords.
func (b *builder) pointer(n *node, ptr string) (*node, string) {
	if ptr == "" {
		return n, ""
	}
	segs := strings.Split(ptr[1:], "/")
	for i := range segs {
		segs[i] = pointerUnescaper.Replace(segs[i])
	}
	s := n.s
	var list []*jsonschema.Schema
	var dict map[string]*jsonschema.Schema
	kind := 's' // 's' a schema, 'l' a list, 'm' a map
	for _, seg := range segs {
		switch kind {
		case 's':
			if s == nil {
				return nil, "it leads to a missing schema"
			}
			kind = 's'
			switch seg {
			case "$defs":
				dict, kind = s.Defs, 'm'
			case "definitions":
				dict, kind = s.Definitions, 'm'
			case "dependencies":
				dict, kind = s.DependencySchemas, 'm'
			case "dependentSchemas":
				dict, kind = s.DependentSchemas, 'm'
			case "patternProperties":
				dict, kind = s.PatternProperties, 'm'
			case "properties":
				dict, kind = s.Properties, 'm'
			case "allOf":
				list, kind = s.AllOf, 'l'
			case "anyOf":
				list, kind = s.AnyOf, 'l'
			case "oneOf":
				list, kind = s.OneOf, 'l'
			case "prefixItems":
				list, kind = s.PrefixItems, 'l'
			case "items":
				if s.Items != nil {
					s = s.Items
				} else {
					list, kind = s.ItemsArray, 'l'
				}
			case "additionalItems":
				s = s.AdditionalItems
			case "additionalProperties":
				s = s.AdditionalProperties
			case "contains":
				s = s.Contains
			case "contentSchema":
				s = s.ContentSchema
			case "else":
				s = s.Else
			case "if":
				s = s.If
			case "not":
				s = s.Not
			case "propertyNames":
				s = s.PropertyNames
			case "then":
				s = s.Then
			case "unevaluatedItems":
				s = s.UnevaluatedItems
			case "unevaluatedProperties":
				s = s.UnevaluatedProperties
			default:
				return nil, fmt.Sprintf("%q is not a keyword that holds schemas", seg)
			}
		case 'l':
			if seg == "-" || (len(seg) > 1 && seg[0] == '0') {
				return nil, fmt.Sprintf("%q is not an index", seg)
			}
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(list) {
				return nil, fmt.Sprintf("%q is not an index of the list", seg)
			}
			s, kind = list[i], 's'
		case 'm':
			c, ok := dict[seg]
			if !ok {
				return nil, fmt.Sprintf("no key %q", seg)
			}
			s, kind = c, 's'
		}
	}
	if kind != 's' || s == nil {
		return nil, "it does not lead to a schema"
	}
	t := b.nodes[s]
	if t == nil {
		return nil, "it leads outside the schema"
	}
	return t, ""
}

// edges records the schemas n applies, mirroring jsonschema-go's
// validator: the same keywords, for the schema's draft.
func (b *builder) edges(n *node) error {
	s := n.s
	get := func(c *jsonschema.Schema) *node {
		if c == nil {
			return nil
		}
		return b.nodes[c]
	}
	inPlace := func(cs ...*jsonschema.Schema) {
		for _, c := range cs {
			if c != nil {
				n.inPlace = append(n.inPlace, b.nodes[c])
			}
		}
	}
	if s.Ref != "" {
		t, _, err := b.resolve(n, s.Ref)
		if err != nil {
			return err
		}
		n.inPlace = append(n.inPlace, t)
		if b.draft7 {
			// Draft-07 ignores every keyword beside $ref.
			n.enum, n.patternSize, n.unique, n.patterns = 0, 0, false, nil
			return nil
		}
	}
	if s.DynamicRef != "" {
		t, anchor, err := b.resolve(n, s.DynamicRef)
		if err != nil {
			return err
		}
		if anchor == "" {
			n.inPlace = append(n.inPlace, t)
		} else {
			// Resolved at validation time to some schema with this
			// dynamic anchor: take them all.
			for _, m := range b.order {
				if m.s.DynamicAnchor == anchor {
					n.inPlace = append(n.inPlace, m)
				}
			}
		}
	}
	inPlace(s.AllOf...)
	inPlace(s.AnyOf...)
	inPlace(s.OneOf...)
	inPlace(s.Not, s.If, s.Then, s.Else)
	deps := s.DependentSchemas
	if b.draft7 {
		deps = s.DependencySchemas
	}
	for _, k := range slices.Sorted(maps.Keys(deps)) {
		inPlace(deps[k])
	}
	if len(s.Properties) > 0 {
		n.props = map[string]*node{}
		for k, c := range s.Properties {
			if c != nil {
				n.props[k] = b.nodes[c]
			}
		}
	}
	n.additional = get(s.AdditionalProperties)
	n.names = get(s.PropertyNames)
	n.unevalProps = get(s.UnevaluatedProperties)
	if b.draft7 {
		for _, c := range s.ItemsArray {
			n.prefix = append(n.prefix, get(c))
		}
		if s.ItemsArray != nil {
			n.moreItems = get(s.AdditionalItems)
		} else {
			n.items = get(s.Items)
		}
	} else {
		for _, c := range s.PrefixItems {
			n.prefix = append(n.prefix, get(c))
		}
		n.items = get(s.Items)
	}
	n.contains = get(s.Contains)
	n.unevalItems = get(s.UnevaluatedItems)
	return nil
}

// applied lists every schema n applies, in place or to a part.
func (n *node) applied() []*node {
	out := slices.Clone(n.inPlace)
	for _, k := range slices.Sorted(maps.Keys(n.props)) {
		out = append(out, n.props[k])
	}
	for _, p := range n.patterns {
		out = append(out, p.n)
	}
	out = append(out, n.prefix...)
	for _, c := range []*node{n.additional, n.names, n.unevalProps, n.items, n.moreItems, n.contains, n.unevalItems} {
		if c != nil {
			out = append(out, c)
		}
	}
	return out
}

// checkGraph refuses a cycle of schemas applied in place, and a schema
// that applies more than MaxExpansion schemas to one value, among the
// schemas a check can reach from the root.
func (b *builder) checkGraph(root *node) error {
	reach := []*node{root}
	seen := map[*node]bool{root: true}
	for i := 0; i < len(reach); i++ {
		for _, c := range reach[i].applied() {
			if c != nil && !seen[c] {
				seen[c] = true
				reach = append(reach, c)
			}
		}
	}
	g := &graph{max: b.lim.MaxExpansion, state: map[*node]int8{}, count: map[*node]int{}}
	for _, n := range reach {
		if _, err := g.expand(n); err != nil {
			return err
		}
	}
	return nil
}

type graph struct {
	max   int
	state map[*node]int8 // 1: on the stack; 2: done
	count map[*node]int  // schemas applied to one value from a node, itself included
	stack []*node
}

// expand counts the schemas n applies to its value, itself included,
// and finds cycles on the way. Its recursion is bounded by max.
func (g *graph) expand(n *node) (int, error) {
	switch g.state[n] {
	case 2:
		return g.count[n], nil
	case 1:
		i := slices.Index(g.stack, n)
		var cycle []string
		for _, m := range g.stack[i:] {
			cycle = append(cycle, m.fragment())
		}
		cycle = append(cycle, n.fragment())
		return 0, &Error{Kind: KindCycle, At: n.fragment(), Cycle: cycle,
			Msg: fmt.Sprintf("the schema has a reference cycle: %s applies itself to the same value (through %s) and checking any value against it would never end",
				n.fragment(), strings.Join(cycle, " → "))}
	}
	if len(g.stack) >= g.max {
		return 0, g.tooMany(g.stack[0])
	}
	g.state[n] = 1
	g.stack = append(g.stack, n)
	total := 1
	for _, c := range n.inPlace {
		k, err := g.expand(c)
		if err != nil {
			return 0, err
		}
		total += k
		if total > g.max {
			return 0, g.tooMany(n)
		}
	}
	g.stack = g.stack[:len(g.stack)-1]
	g.state[n], g.count[n] = 2, total
	return total, nil
}

func (g *graph) tooMany(n *node) error {
	return &Error{Kind: KindExpansion, At: n.fragment(),
		Msg: fmt.Sprintf("the schema at %s applies more than %d schemas to one value through $ref, allOf, anyOf, oneOf, not and if/then/else; simplify it", n.fragment(), g.max)}
}

// Validate checks v, a value decoded by encoding/json into any, against
// the schema: a *LimitError when the check would go too deep or cost too
// much, otherwise jsonschema-go's verdict.
func (s *Schema) Validate(v any) error {
	w := walker{lim: s.lim}
	if err := w.visit(v, s.root, 1); err != nil {
		return err
	}
	return s.res.Validate(v)
}

// ValidateDecoded is Validate for a value decoded with numbers as
// json.Number (json.Decoder.UseNumber), or as float64: it gives
// Validate's verdict on the value with every json.Number made a float64
// (nil when out of float64's range). For schemas of the common kind
// (objects of scalar properties, enums, required and additional
// properties, arrays, nested objects of the same kind) it decides that a
// value is valid without the validator and without allocating; a value
// it finds invalid, and every schema it does not model, goes to the
// validator, which gives the verdict and the message.
func (s *Schema) ValidateDecoded(v any) error {
	w := walker{lim: s.lim}
	if err := w.visit(v, s.root, 1); err != nil {
		return err
	}
	if s.fast != nil && s.fast.valid(v) {
		return nil
	}
	return s.res.Validate(PlainNumbers(v))
}

// Fast reports whether the schema is of the kind ValidateDecoded checks
// without the validator.
func (s *Schema) Fast() bool { return s.fast != nil }

// PlainNumbers returns a copy of v with every json.Number made a
// float64, as json.Unmarshal decodes numbers into an any (nil for one
// out of float64's range): the form the validator checks. v is not
// changed.
func PlainNumbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = PlainNumbers(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = PlainNumbers(e)
		}
		return out
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return nil
		}
		return f
	}
	return v
}

// Cost reports the depth and the work a check of v would take, as
// Validate estimates them, and whether it stayed within the limits.
func (s *Schema) Cost(v any) (depth int, work int64, ok bool) {
	w := walker{lim: s.lim}
	err := w.visit(v, s.root, 1)
	return w.deepest, w.work, err == nil
}

// walker estimates the cost of a check, following every schema the
// validator may apply: all of anyOf and oneOf, then and else both, every
// dependent schema, items and contains on every item, patternProperties
// and additionalProperties on every property.
type walker struct {
	lim     Limits
	work    int64
	deepest int
}

// patternCost converts the cost of matching a text of n bytes against a
// pattern of size instructions to work units (about 100 steps each).
func patternCost(n, size int) int64 { return 1 + int64(n)*int64(size)/100 }

func (w *walker) spend(n int64) error {
	w.work += n
	if w.work > w.lim.MaxWork {
		return &LimitError{Limit: w.lim.MaxWork}
	}
	return nil
}

func (w *walker) visit(v any, n *node, depth int) error {
	if n == nil {
		return nil
	}
	if depth > w.lim.MaxDepth {
		return &LimitError{Depth: true, Limit: int64(w.lim.MaxDepth)}
	}
	w.deepest = max(w.deepest, depth)
	// A schema applied at depth d costs d: when the value fails it, the
	// validator's error text for it is copied into the text of each
	// enclosing schema (anyOf and oneOf keep the texts of every branch),
	// so the text built grows with the depth of each failure.
	if err := w.spend(int64(depth) + int64(n.enum)); err != nil {
		return err
	}
	for _, c := range n.inPlace {
		if err := w.visit(v, c, depth+1); err != nil {
			return err
		}
	}
	switch x := v.(type) {
	case string:
		if n.patternSize > 0 {
			return w.spend(patternCost(len(x), n.patternSize))
		}
	case []any:
		if n.unique {
			if err := w.spend(int64(len(x))); err != nil {
				return err
			}
		}
		for i, e := range x {
			if i < len(n.prefix) {
				if err := w.visit(e, n.prefix[i], depth+1); err != nil {
					return err
				}
			}
			for _, c := range []*node{n.items, n.moreItems, n.contains, n.unevalItems} {
				if err := w.visit(e, c, depth+1); err != nil {
					return err
				}
			}
		}
	case map[string]any:
		for k, e := range x {
			p := n.props[k]
			if err := w.visit(e, p, depth+1); err != nil {
				return err
			}
			for _, pp := range n.patterns {
				if err := w.spend(patternCost(len(k), pp.size)); err != nil {
					return err
				}
				if err := w.visit(e, pp.n, depth+1); err != nil {
					return err
				}
			}
			if p == nil {
				if err := w.visit(e, n.additional, depth+1); err != nil {
					return err
				}
			}
			if n.names != nil { // boxing k costs an allocation
				if err := w.visit(k, n.names, depth+1); err != nil {
					return err
				}
			}
			if err := w.visit(e, n.unevalProps, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}
