package files

// The argument schemas of read, write and edit, byte for byte as
// tools.Define infers them from readArgs, writeArgs and editArgs (whose
// tags stay the source; TestStaticSchemas fails when the two differ).
// Given in full, they spare each program that builds these tools a
// reflection over the argument types at start-up. They are constants,
// copied into each spec, so no caller can change them for another.
const (
	readSchema = `{"type":"object","properties":{` +
		`"file_path":{"type":"string","description":"Absolute, relative to the working directory, or spill:// (a saved tool output)."},` +
		`"offset":{"type":"integer","description":"First line to show, from 1."},` +
		`"limit":{"type":"integer","description":"Most lines to show."}},` +
		`"required":["file_path"],"additionalProperties":false}`
	writeSchema = `{"type":"object","properties":{` +
		`"file_path":{"type":"string","description":"Absolute or relative to the working directory."},` +
		`"content":{"type":"string","description":"The whole new content."}},` +
		`"required":["file_path","content"],"additionalProperties":false}`
	editSchema = `{"type":"object","properties":{` +
		`"file_path":{"type":"string","description":"Absolute or relative to the working directory."},` +
		`"old_string":{"type":"string","description":"Exact text to replace; not empty."},` +
		`"new_string":{"type":"string","description":"Replacement, different from old_string; empty deletes."},` +
		`"replace_all":{"type":"boolean","description":"Replace every occurrence."}},` +
		`"required":["file_path","old_string","new_string"],"additionalProperties":false}`
)
