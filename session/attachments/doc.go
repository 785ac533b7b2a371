// Package attachments stores the bytes a session refers to by digest
// (images the user attached or a tool read), apart from the log: a log
// names an attachment by its digest ("sha256:<hex>") and the bytes live
// here. [Files] keeps each attachment in a file named by its digest,
// written atomically; [Memory] keeps them in memory for tests and
// short-lived programs. Both satisfy tools.AttachmentStore and
// model.ImageSource without importing either: the methods are Put and Get
// with the harness error codes.
//
// It imports harness and internal helpers that import nothing of the
// module; never session, tools, agent or spill.
package attachments
