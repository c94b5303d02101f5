package input

// combine recomputes the input watermark as the minimum over the active
// channels and advances it when it grew. With no active channel the
// subtask tells its consumers it is idle.
func (p *Protocol) combine() {
	low, holder, anyActive := MaxWatermark, -1, false
	for c, ch := range p.chans {
		if ch.state == ChanActive {
			anyActive = true
			if ch.wm < low {
				low, holder = ch.wm, c
			}
		}
	}
	p.holder = holder
	if !anyActive {
		if p.allEnded() {
			return
		}
		// No channel will advance its watermark until one becomes active
		// again, so the highest watermark any channel reached is safe to
		// apply now (Flink's status valve does the same).
		high := MinWatermark
		for _, ch := range p.chans {
			if ch.state != ChanEnded && ch.wm > high {
				high = ch.wm
			}
		}
		if high > p.inWM {
			p.advance(high)
		}
		if !p.idle {
			p.idle = true
			p.emit(Action{Kind: GoIdle})
		}
		return
	}
	if p.idle {
		p.idle = false
		p.emit(Action{Kind: GoActive})
	}
	if low > p.inWM {
		p.advance(low)
	}
}

func (p *Protocol) advance(wm int64) {
	p.inWM = wm
	p.emit(Action{Kind: Advance, Watermark: wm})
}
