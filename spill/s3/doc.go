// Package s3 keeps spilled tool output in S3-compatible object storage
// (AWS S3, MinIO, Ceph, R2, ...), for programs whose sessions move
// between machines: an output saved on one worker is read back on any
// other.
//
// [New] returns a spill.Store that passes the spill conformance suite
// (spill/spilltest).
//
// Each output is one object, written as it streams in. Large outputs go
// up in parts, so memory stays bounded whatever the output's size. The
// key is one no owner id can steer: the session's sanitized id with a
// hash of the exact id, then the tool and call and a random suffix.
//
// Beside each output, Save keeps a small line index: where every 512th
// line starts, the size and the line count. The store's ReadWindow
// method, which the read tool finds by type assertion and uses for its
// offset and limit, fetches the bytes of the lines it shows with a ranged
// request instead of the whole object. 100 lines near the end of a 7 MB
// output fetch about 40 KB. The reader Open returns fetches with ranged
// requests as it is read, and is an io.ReaderAt and io.Seeker too.
//
// DeleteSession removes a session's outputs by prefix. Expire removes
// outputs older than a cutoff, by their objects' modification times.
// There is no per-session byte budget yet (spill.NewDir has one).
//
// It imports harness, fs (text windows), tools and spill (the contracts
// it implements) and the MinIO client (github.com/minio/minio-go/v7);
// nothing of session or agent.
package s3
