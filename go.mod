module github.com/weir-stream/weir

go 1.26

require go.uber.org/goleak v1.3.0 // indirect
