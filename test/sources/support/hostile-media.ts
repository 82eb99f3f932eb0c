// Media files that are really HLS playlists: the trick behind ffmpeg's file-disclosure and SSRF
// reports (CVE-2016-1897/1898, the 2017 "AVI with an m3u8 inside"). Each playlist names an http
// URL and a local file; a safe ffmpeg must touch neither.
import { constants } from "node:fs";
import { open } from "node:fs/promises";

export function hostilePlaylist(httpUrl: string, localPath: string): string {
  return [
    "#EXTM3U",
    "#EXT-X-TARGETDURATION:1",
    "#EXT-X-MEDIA-SEQUENCE:0",
    "#EXTINF:1.0,",
    httpUrl,
    "#EXTINF:1.0,",
    `file://${localPath}`,
    "#EXT-X-ENDLIST",
    "",
  ].join("\n");
}

/** The classic form: an AVI whose text stream carries a GAB2 subtitle packet holding the playlist. */
export function gab2Avi(playlist: string): Buffer {
  const header = Buffer.from(
    "RIFF\x00\x00\x00\x00AVI LIST\x14\x01\x00\x00hdrlavih8\x00\x00\x00@\x9c\x00\x00\x00\x00" +
      "\x00\x00\x00\x00\x00\x00\x10\x00\x00\x00}\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00" +
      "\x00\x00\x00\x00\xe0\x00\x00\x00\xa0\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
      "\x00\x00\x00\x00\x00\x00\x00LISTt\x00\x00\x00strlstrh8\x00\x00\x00txts\x00\x00\x00\x00" +
      "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x19\x00\x00\x00\x00\x00\x00" +
      "\x00}\x00\x00\x00\x86\x03\x00\x00\x10'\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\xe0" +
      "\x00\xa0\x00strf(\x00\x00\x00(\x00\x00\x00\xe0\x00\x00\x00\xa0\x00\x00\x00\x01\x00" +
      "\x18\x00XVID\x00H\x03\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
      "\x00\x00\x00LIST movi",
    "latin1",
  );
  const content = Buffer.concat([
    Buffer.from("GAB2\x00\x02\x00", "latin1"),
    Buffer.alloc(10),
    Buffer.from(playlist),
  ]);
  const size = Buffer.alloc(4);
  size.writeUInt32LE(content.length);
  const filler = Buffer.from("00dc\x03\x00\x00\x00\x00\x00\x00", "latin1");
  return Buffer.concat([header, Buffer.from("00tx"), size, content, ...Array(200).fill(filler)]);
}

/**
 * Watches a FIFO: opening its write end without blocking succeeds only while some process has
 * it open for reading, so this sees whether ffmpeg opened the "local file" at all.
 */
export function watchFifo(path: string): { stop(): Promise<boolean> } {
  let opened = false;
  let running = true;
  const loop = (async () => {
    while (running) {
      try {
        const handle = await open(path, constants.O_WRONLY | constants.O_NONBLOCK);
        opened = true;
        await handle.close();
      } catch {
        // ENXIO: nobody is reading
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return opened;
    },
  };
}
