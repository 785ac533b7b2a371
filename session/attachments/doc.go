// Package attachments stores the bytes a session refers to by digest
// (images the user attached or a tool read), apart from the log. A log
// names an attachment by its digest ("sha256:<hex>"); the bytes live
// here.
//
// A [Store] is such a place. [NewFiles] keeps each attachment in a file
// named by its digest, written atomically. [NewMemory] keeps them in
// memory, for tests and short-lived programs.
//
// Put returns once the attachment is durable. Stage stores it the same
// way but leaves the sync for Sync, which makes every staged attachment
// durable at once (for files: each file synced, then the directory
// once); a caller storing several attachments that must survive
// together, such as the objects of a workspace checkpoint, pays one
// directory sync for all of them.
//
// A Store satisfies tools.AttachmentStore and model.ImageSource without
// importing either: its methods are Put and Get, with the harness error
// codes. Put computes the digest; a caller that needs one learns it from
// Put.
//
// It imports harness and internal helpers that import nothing of the
// module; never session, tools, agent or spill.
package attachments
