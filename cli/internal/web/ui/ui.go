// Package ui holds the web dashboard: a single HTML page with vanilla
// JavaScript that polls the JSON API (/api/v1) every second and draws the
// jobs, the selected job's task graph, throughput and watermark-lag charts,
// checkpoints and recoveries.
//
// The charts use uPlot (https://github.com/leeoniya/uPlot, MIT licence, see
// uPlot.LICENSE), version 1.6.32, copied from the npm package's dist
// directory: npm install uplot@1.6.32, then copy
// node_modules/uplot/dist/uPlot.iife.min.js, uPlot.min.css and
// node_modules/uplot/LICENSE (as uPlot.LICENSE) here.
package ui

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed index.html dashboard.js dashboard.css uPlot.iife.min.js uPlot.min.css uPlot.LICENSE
var files embed.FS

// FS returns the dashboard's files.
func FS() fs.FS { return files }

// Handler serves the dashboard: index.html at / and the scripts and
// stylesheets next to it. Requests for anything else get 404.
func Handler() http.Handler {
	fsrv := http.FileServerFS(files)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/uPlot.LICENSE" {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		}
		w.Header().Set("Cache-Control", "no-cache")
		fsrv.ServeHTTP(w, r)
	})
}
