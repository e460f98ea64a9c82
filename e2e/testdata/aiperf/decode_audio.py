"""Decode audio files with soundfile (libsndfile, whose MP3 decoder is
mpg123), the library AIPerf 0.13 writes its clips with.

Usage: decode_audio.py FILE... Prints one JSON list, for each file its
container format, sample rate, channels, the samples per channel decoded,
and the largest absolute sample; a file that does not decode raises.
"""

import json
import sys

import numpy as np
import soundfile as sf

out = []
for name in sys.argv[1:]:
    data, rate = sf.read(name, dtype="int16", always_2d=True)
    out.append({
        "format": sf.info(name).format,
        "samplerate": rate,
        "channels": data.shape[1],
        "frames": data.shape[0],
        "peak": int(np.abs(data).max(initial=0)),
    })
print(json.dumps(out))
