import { describe, expect, it } from "vitest";
import { detectSource } from "../../schema/platform.ts";

// [input, platform, normalised URL]
const shapes: Array<[string, string, string]> = [
  // YouTube
  [
    "https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=42s",
    "youtube",
    "https://www.youtube.com/watch?v=dQw4w9WgXcQ",
  ],
  ["https://youtu.be/dQw4w9WgXcQ?si=abc", "youtube", "https://www.youtube.com/watch?v=dQw4w9WgXcQ"],
  [
    "https://www.youtube.com/shorts/aBcDeFgHiJk",
    "youtube",
    "https://www.youtube.com/watch?v=aBcDeFgHiJk",
  ],
  [
    "https://m.youtube.com/watch?v=dQw4w9WgXcQ",
    "youtube",
    "https://www.youtube.com/watch?v=dQw4w9WgXcQ",
  ],
  [
    "https://music.youtube.com/watch?v=dQw4w9WgXcQ&list=RD",
    "youtube",
    "https://www.youtube.com/watch?v=dQw4w9WgXcQ",
  ],
  [
    "https://www.youtube.com/embed/dQw4w9WgXcQ",
    "youtube",
    "https://www.youtube.com/watch?v=dQw4w9WgXcQ",
  ],
  [
    "https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ",
    "youtube",
    "https://www.youtube.com/watch?v=dQw4w9WgXcQ",
  ],
  [
    "https://www.youtube.com/live/dQw4w9WgXcQ",
    "youtube",
    "https://www.youtube.com/watch?v=dQw4w9WgXcQ",
  ],
  // TikTok
  [
    "https://www.tiktok.com/@some.user/video/7234567890123456789?lang=en",
    "tiktok",
    "https://www.tiktok.com/@some.user/video/7234567890123456789",
  ],
  [
    "https://m.tiktok.com/v/7234567890123456789.html",
    "tiktok",
    "https://www.tiktok.com/@/video/7234567890123456789",
  ],
  [
    "https://www.tiktok.com/embed/v2/7234567890123456789",
    "tiktok",
    "https://www.tiktok.com/@/video/7234567890123456789",
  ],
  ["https://vm.tiktok.com/ZMabc123/", "tiktok", "https://vm.tiktok.com/ZMabc123/"],
  ["https://vt.tiktok.com/ZSxyz789", "tiktok", "https://vt.tiktok.com/ZSxyz789/"],
  ["https://www.tiktok.com/t/ZTRabc/", "tiktok", "https://www.tiktok.com/t/ZTRabc/"],
  // Instagram
  [
    "https://www.instagram.com/reel/Cabc_123-x/?igsh=zz",
    "instagram",
    "https://www.instagram.com/reel/Cabc_123-x/",
  ],
  ["https://instagram.com/reels/Cabc123/", "instagram", "https://www.instagram.com/reel/Cabc123/"],
  ["https://www.instagram.com/p/Bxyz987/", "instagram", "https://www.instagram.com/p/Bxyz987/"],
  [
    "https://www.instagram.com/someone/reel/Cabc123/",
    "instagram",
    "https://www.instagram.com/reel/Cabc123/",
  ],
  ["https://instagr.am/p/Bxyz987", "instagram", "https://www.instagram.com/p/Bxyz987/"],
  // Facebook
  [
    "https://www.facebook.com/watch/?v=1234567890",
    "facebook",
    "https://www.facebook.com/watch/?v=1234567890",
  ],
  [
    "https://m.facebook.com/somepage/videos/1234567890/",
    "facebook",
    "https://www.facebook.com/watch/?v=1234567890",
  ],
  [
    "https://www.facebook.com/somepage/videos/a-title/1234567890",
    "facebook",
    "https://www.facebook.com/watch/?v=1234567890",
  ],
  [
    "https://www.facebook.com/video.php?v=1234567890",
    "facebook",
    "https://www.facebook.com/watch/?v=1234567890",
  ],
  [
    "https://www.facebook.com/reel/987654321",
    "facebook",
    "https://www.facebook.com/reel/987654321",
  ],
  ["https://fb.watch/aBcD12/", "facebook", "https://fb.watch/aBcD12/"],
  [
    "https://www.facebook.com/share/v/1AbCd/",
    "facebook",
    "https://www.facebook.com/share/v/1AbCd/",
  ],
  [
    "https://www.facebook.com/plugins/video.php?href=https%3A%2F%2Fwww.facebook.com%2Fpage%2Fvideos%2F555%2F",
    "facebook",
    "https://www.facebook.com/watch/?v=555",
  ],
  // X
  [
    "https://x.com/someone/status/1790000000000000000",
    "x",
    "https://x.com/someone/status/1790000000000000000",
  ],
  [
    "https://twitter.com/someone/status/1790000000000000000?s=20",
    "x",
    "https://x.com/someone/status/1790000000000000000",
  ],
  [
    "https://mobile.twitter.com/someone/status/1790000000000000000",
    "x",
    "https://x.com/someone/status/1790000000000000000",
  ],
  [
    "https://mobile.x.com/someone/status/1790000000000000000/video/2",
    "x",
    "https://x.com/someone/status/1790000000000000000/video/2",
  ],
  [
    "https://twitter.com/i/web/status/1790000000000000000",
    "x",
    "https://x.com/i/status/1790000000000000000",
  ],
  // Vimeo
  ["https://vimeo.com/76979871", "vimeo", "https://vimeo.com/76979871"],
  ["https://vimeo.com/76979871/8272103f6e", "vimeo", "https://vimeo.com/76979871/8272103f6e"],
  ["https://vimeo.com/channels/staffpicks/76979871", "vimeo", "https://vimeo.com/76979871"],
  ["https://vimeo.com/showcase/1111/video/76979871", "vimeo", "https://vimeo.com/76979871"],
  [
    "https://player.vimeo.com/video/76979871?h=8272103f6e&autoplay=1",
    "vimeo",
    "https://player.vimeo.com/video/76979871?h=8272103f6e",
  ],
  // Google Drive
  [
    "https://drive.google.com/file/d/1AbCdEfGhIjKlMnOp/view?usp=sharing",
    "google_drive",
    "https://drive.usercontent.google.com/download?id=1AbCdEfGhIjKlMnOp&export=download&confirm=t",
  ],
  [
    "https://drive.google.com/file/u/0/d/1AbCdEfGhIjKlMnOp/edit",
    "google_drive",
    "https://drive.usercontent.google.com/download?id=1AbCdEfGhIjKlMnOp&export=download&confirm=t",
  ],
  [
    "https://drive.google.com/open?id=1AbCdEfGhIjKlMnOp",
    "google_drive",
    "https://drive.usercontent.google.com/download?id=1AbCdEfGhIjKlMnOp&export=download&confirm=t",
  ],
  [
    "https://drive.google.com/uc?id=1AbCdEfGhIjKlMnOp&export=download",
    "google_drive",
    "https://drive.usercontent.google.com/download?id=1AbCdEfGhIjKlMnOp&export=download&confirm=t",
  ],
  [
    "https://drive.usercontent.google.com/download?id=1AbCdEfGhIjKlMnOp&export=download",
    "google_drive",
    "https://drive.usercontent.google.com/download?id=1AbCdEfGhIjKlMnOp&export=download&confirm=t",
  ],
  [
    "https://drive.google.com/file/d/1AbCdEfGhIjKlMnOp/view?resourcekey=0-XyZ",
    "google_drive",
    "https://drive.usercontent.google.com/download?id=1AbCdEfGhIjKlMnOp&export=download&confirm=t&resourcekey=0-XyZ",
  ],
  // Direct
  [
    "https://cdn.example.com/media/clip.MP4?sig=abc",
    "direct",
    "https://cdn.example.com/media/clip.MP4?sig=abc",
  ],
  ["https://cdn.example.com/a/b.mov", "direct", "https://cdn.example.com/a/b.mov"],
  ["http://files.example.org/x.webm", "direct", "http://files.example.org/x.webm"],
  [
    "https://storage.example.net/object/12345",
    "direct",
    "https://storage.example.net/object/12345",
  ],
];

describe("detectSource", () => {
  it.each(shapes)("%s → %s", (input, platform, url) => {
    expect(detectSource(input)).toEqual({ ok: true, platform, url });
  });

  const refused: Array<[string, string]> = [
    ["not a url", "not a valid URL"],
    ["ftp://example.com/clip.mp4", "http and https"],
    ["file:///tmp/clip.mp4", "http and https"],
    ["https://www.youtube.com/@somechannel", "YouTube"],
    ["https://www.youtube.com/watch?v=short", "YouTube"],
    ["https://www.tiktok.com/@someone", "TikTok"],
    ["https://www.instagram.com/someone/", "Instagram"],
    ["https://www.facebook.com/somepage", "Facebook"],
    ["https://x.com/someone", "X"],
    ["https://vimeo.com/channels/staffpicks", "Vimeo"],
    ["https://drive.google.com/drive/folders/1AbCdEfGhIjKlMnOp", "folder"],
    ["https://docs.google.com/document/d/1AbCdEfGhIjKlMnOp/edit", "Docs"],
    ["https://en.wikipedia.org/wiki/Film", "not a supported video source"],
  ];
  it.each(refused)("refuses %s", (input, word) => {
    const result = detectSource(input);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toContain(word);
  });
});
