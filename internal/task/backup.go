package task

import "github.com/weir-stream/weir/internal/backup"

// Upstream backup's store of retained output is internal/backup; the
// subtask's side (when to mark and trim it, replay requests) is in
// replay.go.

// ErrBackupLost is the cause of a failure that upstream backup cannot
// recover: a sender no longer holds the output a restarted receiver
// needs (its retained output outgrew Options.RetainLimit), or a
// restarted subtask's consumption order was not kept. The engine falls
// back to a global rollback.
var ErrBackupLost = backup.ErrLost
