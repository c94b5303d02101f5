package weir

import (
	"context"

	"github.com/weir-stream/weir/internal/engine"
	"github.com/weir-stream/weir/internal/hook"
	"github.com/weir-stream/weir/internal/store"
)

func init() {
	hook.Compile = func(ctx context.Context, p any) (engine.Config, error) {
		pp := p.(*Pipeline)
		pl, err := pp.plan()
		if err != nil {
			return engine.Config{}, err
		}
		return pp.engineConfig(ctx, pl)
	}
	hook.SetDeployer = func(p any, d engine.Deployer) { p.(*Pipeline).deploy = d }
	hook.SetFence = func(p any, f store.Fence) { p.(*Pipeline).fence = f }
}
