// Package s3 keeps session attachments (images) in S3-compatible object
// storage (AWS S3, MinIO, Ceph, R2, ...), so that every worker of a fleet
// reads the images a session's log refers to.
//
// [Attachments] is a content-addressed attachment store (a
// tools.AttachmentStore and a model.ImageSource) that passes the
// attachment conformance suite (session/sessiontest.TestAttachments):
// each attachment is one object named by its digest,
// <prefix>sha256/<hex>, written in one request with its MD5 so the
// service refuses bytes damaged on the way; storing bytes already there sends
// nothing; Get hashes what it reads and refuses bytes that do not match
// their digest (harness.CodeCorruptAttachment).
//
// It imports harness, the module's internal digest rules and the MinIO client
// (github.com/minio/minio-go/v7); nothing of tools, spill or agent.
package s3
