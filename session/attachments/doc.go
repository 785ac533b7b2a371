// Package attachments stores the bytes a session refers to by digest
// (images the user attached or a tool read), apart from the log. A log
// names an attachment by its digest ("sha256:<hex>"); the bytes live
// here.
//
// A [Store] is such a place. [NewFiles] keeps each attachment in a file
// named by its digest, written atomically. [NewMemory] keeps them in
// memory, for tests and short-lived programs.
//
// A Store satisfies tools.AttachmentStore and model.ImageSource without
// importing either: its methods are Put and Get, with the harness error
// codes. Put computes the digest; a caller that needs one learns it from
// Put.
//
// It imports harness and internal helpers that import nothing of the
// module; never session, tools, agent or spill.
package attachments
