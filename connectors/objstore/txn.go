package objstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/weir-stream/weir/connector"
)

// The writer's two-phase commit (connector.Committer): a transaction is
// the JSON list of the uploads finished since the last barrier, with
// their parts; committing it completes them.

// PreCommit finishes every open file, uploading its last part, and
// returns the uploads finished since the last pre-commit. Files begun
// after it carry epoch checkpoint+1.
func (w *writer[T]) PreCommit(ctx context.Context, checkpoint int64) ([]byte, error) {
	if w.err != nil {
		return nil, w.err
	}
	if w.err = w.finishAll(ctx); w.err != nil {
		return nil, w.err
	}
	w.epoch = checkpoint + 1
	if len(w.finished) == 0 {
		return nil, nil
	}
	txn, err := json.Marshal(w.finished)
	if err != nil {
		return nil, fmt.Errorf("objstore: %w", err)
	}
	w.finished = nil
	return txn, nil
}

// Commit completes the uploads of a transaction. Completing one again
// does nothing.
func (w *writer[T]) Commit(ctx context.Context, txn []byte) error {
	us, err := decodeTxn(txn)
	if err != nil {
		return err
	}
	for _, u := range us {
		if err := w.st.complete(ctx, u); err != nil {
			return err
		}
	}
	return nil
}

func decodeTxn(txn []byte) ([]finishedUpload, error) {
	if len(txn) == 0 {
		return nil, nil
	}
	var us []finishedUpload
	if err := json.Unmarshal(txn, &us); err != nil {
		return nil, fmt.Errorf("objstore: corrupt transaction %q: %w", txn, err)
	}
	return us, nil
}

// Recover completes the restored checkpoint's uploads, aborts every other
// upload of this subtask (and of the old subtasks it took over, see
// connector.Committer) under the prefix, and deletes their committed part
// files of epochs after restored.
func (w *writer[T]) Recover(ctx context.Context, restored int64, commit [][]byte) error {
	w.txn = true
	w.epoch = restored + 1
	keep := map[string]bool{}
	for _, t := range commit {
		us, err := decodeTxn(t)
		if err != nil {
			return err
		}
		for _, u := range us {
			if err := w.st.complete(ctx, u); err != nil {
				return err
			}
			keep[u.ID] = true
		}
	}
	uploads, err := w.st.uploads(ctx)
	if err != nil {
		return err
	}
	for _, u := range uploads {
		p, ok := w.st.parsePart(u.Key)
		if !ok || !w.owns(p.subtask) || keep[u.ID] {
			continue
		}
		if _, err := w.st.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: &w.st.bucket, Key: &u.Key, UploadId: &u.ID}); err != nil && !isNoSuchUpload(err) {
			return fmt.Errorf("objstore: aborting the upload of s3://%s/%s: %w", w.st.bucket, u.Key, err)
		}
	}
	if restored == 0 {
		return nil
	}
	parts, err := w.st.parts(ctx)
	if err != nil {
		return err
	}
	for _, p := range parts {
		if w.owns(p.subtask) && p.epoch > restored {
			if _, err := w.st.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &w.st.bucket, Key: &p.key}); err != nil {
				return fmt.Errorf("objstore: withdrawing s3://%s/%s, committed after checkpoint %d: %w", w.st.bucket, p.key, restored, err)
			}
		}
	}
	return nil
}

// owns reports whether Recover cleans up after subtask sub: its own and,
// after a restore at a lower parallelism, those of the old subtasks no
// longer there whose transactions it was handed.
func (w *writer[T]) owns(sub int) bool {
	return sub == w.subtask || w.parallelism > 0 && sub >= w.parallelism && sub%w.parallelism == w.subtask
}

// complete completes an upload. An upload the server no longer knows was
// completed before if its object exists; otherwise its output is lost,
// which no restart cures.
func (s *store) complete(ctx context.Context, u finishedUpload) error {
	parts := make([]types.CompletedPart, len(u.Parts))
	for i, p := range u.Parts {
		parts[i] = types.CompletedPart{PartNumber: aws.Int32(p.N), ETag: aws.String(p.ETag)}
	}
	slices.SortFunc(parts, func(a, b types.CompletedPart) int { return int(*a.PartNumber - *b.PartNumber) })
	_, err := s.client.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: &s.bucket, Key: &u.Key, UploadId: &u.ID,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}})
	if err == nil {
		return nil
	}
	if !isNoSuchUpload(err) {
		return fmt.Errorf("objstore: completing the upload of s3://%s/%s: %w", s.bucket, u.Key, err)
	}
	if _, herr := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &s.bucket, Key: &u.Key}); herr == nil {
		return nil // completed before
	} else if httpStatus(herr) != http.StatusNotFound {
		return fmt.Errorf("objstore: completing the upload of s3://%s/%s: %w", s.bucket, u.Key, herr)
	}
	return connector.ConfigError(fmt.Errorf("objstore: the upload of s3://%s/%s is lost: the server knows neither it nor the object (was it aborted, or the object deleted, while the job ran?)", s.bucket, u.Key))
}

// isNoSuchUpload reports whether err says the upload does not exist (any
// more).
func isNoSuchUpload(err error) bool {
	var api smithy.APIError
	if errors.As(err, &api) && api.ErrorCode() == "NoSuchUpload" {
		return true
	}
	var nsu *types.NoSuchUpload
	return errors.As(err, &nsu)
}
