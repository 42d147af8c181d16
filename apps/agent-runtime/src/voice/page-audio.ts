/**
 * The audio bridge that runs inside the meeting page, added before the page's own scripts. No
 * PulseAudio or virtual devices: everything goes through WebAudio in the page.
 *
 * - Capture: every remote WebRTC audio track is attached to a muted media element (Chromium only
 *   feeds a remote track into WebAudio while an element plays it), mixed, resampled by an
 *   AudioContext at the vendor's 24 kHz, converted to PCM16 and handed to `IN_BINDING`.
 * - Playback: `getUserMedia` answers with a stream fed by WebAudio; the model's PCM16 deltas are
 *   scheduled back to back on it (gapless) and `flush` stops whatever is queued (barge-in).
 */
export const IN_BINDING = "__agentplaneAudioIn";

/** Runs in the page: `window.__agentplaneAudio` is { start(), stop(), play(b64), flush(), stats() }. */
const BRIDGE = `function bridge(binding) {
  const w = window;
  if (w.__agentplaneAudio) return;
  const RATE = 24_000;
  let ctx;
  let mixer;
  let mic;
  let capturing = false;
  let nextTime = 0;
  const queued = new Set();
  const stats = { remoteTracks: 0, chunksOut: 0, played: 0 };
  const keep = [];

  const audio = () => {
    if (ctx) return ctx;
    ctx = new AudioContext({ sampleRate: RATE });
    mixer = ctx.createGain();
    mic = ctx.createMediaStreamDestination();
    // ScriptProcessor keeps this a single classic script (a worklet needs a module URL).
    const tap = ctx.createScriptProcessor(4096, 1, 1);
    tap.onaudioprocess = (e) => {
      if (!capturing) return;
      const input = e.inputBuffer.getChannelData(0);
      const pcm = new Int16Array(input.length);
      for (let i = 0; i < input.length; i++) {
        const s = Math.max(-1, Math.min(1, input[i]));
        pcm[i] = s < 0 ? s * 0x8000 : s * 0x7fff;
      }
      let binary = "";
      const bytes = new Uint8Array(pcm.buffer);
      for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
      stats.chunksOut++;
      w[binding](btoa(binary));
    };
    mixer.connect(tap);
    // A processor only runs while connected to the output; it writes silence there.
    tap.connect(ctx.destination);
    return ctx;
  };

  const attach = (track) => {
    const c = audio();
    const stream = new MediaStream([track]);
    const element = new Audio();
    element.muted = true;
    element.srcObject = stream;
    element.play().catch(() => {});
    keep.push(element);
    c.createMediaStreamSource(stream).connect(mixer);
    stats.remoteTracks++;
  };

  const Original = w.RTCPeerConnection;
  class Tapped extends Original {
    constructor(config) {
      super(config);
      this.addEventListener("track", (e) => {
        if (e.track.kind === "audio") attach(e.track);
      });
    }
  }
  w.RTCPeerConnection = Tapped;

  const devices = navigator.mediaDevices;
  if (devices) {
    const original = devices.getUserMedia.bind(devices);
    devices.getUserMedia = async (constraints) => {
      if (!constraints?.audio) return original(constraints);
      const c = audio();
      await c.resume();
      const tracks = mic.stream.getAudioTracks().map((t) => t.clone());
      return new MediaStream(tracks);
    };
  }

  w.__agentplaneAudio = {
    async start() {
      await audio().resume();
      capturing = true;
    },
    stop() {
      capturing = false;
    },
    play(b64) {
      const c = audio();
      const bytes = Uint8Array.from(atob(b64), (ch) => ch.charCodeAt(0));
      const pcm = new Int16Array(bytes.buffer, 0, Math.floor(bytes.length / 2));
      if (pcm.length === 0) return;
      const buffer = c.createBuffer(1, pcm.length, RATE);
      const data = buffer.getChannelData(0);
      for (let i = 0; i < pcm.length; i++) data[i] = pcm[i] / 0x8000;
      const source = c.createBufferSource();
      source.buffer = buffer;
      source.connect(mic);
      // Back to back: each delta starts where the previous one ends.
      const at = Math.max(c.currentTime + 0.02, nextTime);
      source.start(at);
      nextTime = at + buffer.duration;
      queued.add(source);
      source.onended = () => queued.delete(source);
      stats.played++;
    },
    // Resolves once everything queued has been played.
    drain() {
      const c = audio();
      const left = Math.max(0, nextTime - c.currentTime);
      return new Promise((resolve) => setTimeout(resolve, left * 1000 + 100));
    },
    flush() {
      for (const source of queued) source.stop();
      queued.clear();
      nextTime = 0;
    },
    stats: () => ({ ...stats }),
  };
}`;

/** The script text for `addInitScript`. */
export function pageAudioScript(): string {
  return `(${BRIDGE})(${JSON.stringify(IN_BINDING)});`;
}
