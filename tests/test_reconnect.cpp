// SPDX-License-Identifier: MIT
// Live sources that reconnect (pipeline/io/reconnect.h). A fake inner source, scripted connection
// by connection, on a fake clock: the backoff sequence, the count reset by a frame, giving up,
// indices that keep counting, the estimate of frames lost, a late first open; a stop during a real
// wait; which URIs are wrapped; then an RTP sender on 127.0.0.1 that stops and starts again while
// jetpipe receives, and summary.json's `reconnects` block.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "pipeline/io/gst_pipeline.h"
#include "pipeline/io/gst_source.h"
#include "pipeline/io/reconnect.h"
#include "pipeline/io/source.h"
#include "pipeline/io/video_sink.h"
#include "pipeline/runner.h"
#include "tests/test_util.h"

namespace fs = std::filesystem;

namespace jetpipe {
namespace {

// One connection of the fake source: how its open goes, the frames it gives, how it ends.
struct Connection {
  enum End { kStall, kError, kEnd };
  int frames = 0;
  End end = kStall;
  bool open_fails = false;
  double rate = 0;  // frame_rate(); the fake clock moves 1/rate a frame (0.1 s when 0)
};

// The world the fake lives in: the script, the fake clock, what the wrapper asked for.
struct World {
  std::vector<Connection> script;  // once used up, every open fails
  std::size_t opened = 0;          // opens tried
  double t = 100;                  // the fake clock, seconds
  std::vector<double> waits;       // the waits asked for, in order
  std::vector<std::string> log;

  ReconnectHooks hooks() {
    ReconnectHooks h;
    h.log = [this](const std::string& line) { log.push_back(line); };
    h.now = [this] { return t; };
    h.wait = [this](double s) {
      waits.push_back(s);
      t += s;
      return true;
    };
    return h;
  }
};

constexpr const char* kUri = "fake://cam";
constexpr double kStallS = 0.5;  // what the fake clock moves when a connection stalls

class FakeSource final : public Source {
 public:
  FakeSource(World* w, Connection c) : w_(w), c_(c) {}
  bool next(Frame* f) override {
    if (given_ < c_.frames) {
      w_->t += c_.rate > 0 ? 1 / c_.rate : 0.1;
      *f = Frame{};
      f->index = given_;
      f->source = "cam#" + std::to_string(given_);
      ++given_;
      return true;
    }
    switch (c_.end) {
      case Connection::kStall:
        w_->t += kStallS;
        throw input_error(std::string("source '") + kUri + "': no frame for 0.5 s (stalled)");
      case Connection::kError:
        throw input_error(std::string("source '") + kUri + "': GStreamer: the camera went away");
      case Connection::kEnd:
        break;
    }
    return false;
  }
  std::string describe() const override { return "fake camera"; }
  bool live() const override { return true; }
  double frame_rate() const override { return c_.rate; }

 private:
  World* w_;
  Connection c_;
  int given_ = 0;
};

SourceOpener opener(World* w) {
  return [w]() -> std::unique_ptr<Source> {
    const std::size_t i = w->opened++;
    if (i >= w->script.size() || w->script[i].open_fails) {
      throw input_error(std::string("source '") + kUri + "': cannot open: no such device");
    }
    return std::make_unique<FakeSource>(w, w->script[i]);
  };
}

SourceOptions policy(int attempts, double delay_s, double max_delay_s) {
  SourceOptions o;
  o.reconnect.attempts = attempts;
  o.reconnect.delay_s = delay_s;
  o.reconnect.max_delay_s = max_delay_s;
  return o;
}

// Reads until the end or an error; the frames' indices and names, and the error's text.
struct Read {
  std::vector<std::int64_t> index;
  std::vector<std::string> source;
  std::string error;
};
Read read_all(Source& s) {
  Read r;
  Frame f;
  try {
    while (s.next(&f)) {
      r.index.push_back(f.index);
      r.source.push_back(f.source);
    }
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInput) << e.what();
    r.error = e.what();
  }
  return r;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(Reconnect, BackoffDoublesToTheMaximumThenGivesUp) {
  World w;
  w.script = {{3, Connection::kStall}};  // then every open fails
  auto src = reconnecting_source(kUri, opener(&w), policy(5, 0.5, 3), nullptr, w.hooks());
  const Read r = read_all(*src);
  EXPECT_EQ(r.index, (std::vector<std::int64_t>{0, 1, 2}));
  EXPECT_EQ(w.waits, (std::vector<double>{0.5, 1, 2, 3, 3}));
  EXPECT_EQ(w.opened, 6u);  // the first open and 5 tries
  EXPECT_TRUE(has(r.error, "source 'fake://cam': gave up after 5 failed tries")) << r.error;
  EXPECT_TRUE(has(r.error, "cannot open: no such device")) << r.error;
  const ReconnectStats st = *reconnect_stats(*src);
  EXPECT_TRUE(st.gave_up);
  EXPECT_FALSE(st.away);
  EXPECT_EQ(st.tries, 5);
  EXPECT_EQ(st.reconnects, 0);
  EXPECT_TRUE(has(st.last_error, "no such device")) << st.last_error;
  // Away from the last frame: the stall, then the five waits.
  EXPECT_NEAR(st.seconds_away, kStallS + 0.5 + 1 + 2 + 3 + 3, 1e-9);
  // One line a try, each naming the source and saying which try.
  ASSERT_EQ(w.log.size(), 5u);
  for (std::size_t i = 0; i < w.log.size(); ++i) {
    EXPECT_TRUE(has(w.log[i], "source 'fake://cam': ")) << w.log[i];
    EXPECT_TRUE(has(w.log[i], "(try " + std::to_string(i + 1) + " of 5)")) << w.log[i];
  }
  EXPECT_TRUE(has(w.log[0], "no frame for 0.5 s")) << w.log[0];
  EXPECT_FALSE(src->next(nullptr));  // over: no more tries
  EXPECT_EQ(w.opened, 6u);
}

// A frame after a reopen resets the count: the second outage may use every try again. Indices
// and names keep counting across both.
TEST(Reconnect, AFrameResetsTheCountAndIndicesKeepCounting) {
  World w;
  w.script = {{2, Connection::kError},  // frames 0, 1
              {0, {}, true},            // try 1 fails
              {2, Connection::kStall},  // try 2: frames 2, 3
              {0, {}, true},            // try 1 fails
              {0, Connection::kStall},  // try 2 opens, but stalls before a frame
              {1, Connection::kEnd}};   // try 3: frame 4, then the end of the stream
  auto src = reconnecting_source(kUri, opener(&w), policy(3, 1, 8), nullptr, w.hooks());
  const Read r = read_all(*src);
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.index, (std::vector<std::int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(r.source, (std::vector<std::string>{"cam#0", "cam#1", "cam#2", "cam#3", "cam#4"}));
  EXPECT_EQ(w.waits, (std::vector<double>{1, 2, 1, 2, 4}));
  const ReconnectStats st = *reconnect_stats(*src);
  EXPECT_EQ(st.reconnects, 2);
  EXPECT_EQ(st.tries, 5);
  EXPECT_FALSE(st.gave_up);
  EXPECT_FALSE(st.away);
  EXPECT_EQ(st.outages_without_rate, 2);  // the fake says no frame rate
  EXPECT_EQ(st.frames_lost, 0);
  int back = 0;
  for (const std::string& line : w.log) back += has(line, "back after") ? 1 : 0;
  EXPECT_EQ(back, 2) << ::testing::PrintToString(w.log);
}

// An RTSP stream's end (its server stopped or restarted it) is an outage: reopened, indices
// going on; the same end of another live source ends it.
TEST(Reconnect, AnRtspStreamsEndIsAnOutage) {
  World w;
  w.script = {{2, Connection::kEnd}, {3, Connection::kEnd}};  // then every open fails
  auto src =
      reconnecting_source("rtsp://10.0.0.7/cam", opener(&w), policy(2, 1, 8), nullptr, w.hooks());
  const Read r = read_all(*src);
  EXPECT_EQ(r.index, (std::vector<std::int64_t>{0, 1, 2, 3, 4}));
  EXPECT_TRUE(has(r.error, "gave up")) << r.error;  // after the second end: 2 failed tries
  EXPECT_EQ(reconnect_stats(*src)->reconnects, 1);
  EXPECT_TRUE(has(::testing::PrintToString(w.log), "ended (EOS)"))
      << ::testing::PrintToString(w.log);
  World other;
  other.script = {{2, Connection::kEnd}, {3, Connection::kEnd}};
  auto cam = reconnecting_source(kUri, opener(&other), policy(2, 1, 8), nullptr, other.hooks());
  EXPECT_EQ(read_all(*cam).index, (std::vector<std::int64_t>{0, 1}));
  EXPECT_EQ(other.opened, 1u);
}

// Time away × the frame rate, less the frame that ended the outage.
TEST(Reconnect, FramesLostAreEstimatedFromTheFrameRate) {
  World w;
  w.script = {{5, Connection::kStall, false, 10}, {3, Connection::kEnd, false, 10}};
  auto src = reconnecting_source(kUri, opener(&w), policy(2, 1.5, 8), nullptr, w.hooks());
  const Read r = read_all(*src);
  EXPECT_EQ(r.index, (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  const ReconnectStats st = *reconnect_stats(*src);
  // The stall (0.5 s), the wait (1.5 s) and one frame's time (0.1 s): 2.1 s at 10 fps.
  EXPECT_NEAR(st.seconds_away, 2.1, 1e-9);
  EXPECT_EQ(st.frames_lost, 20);
  EXPECT_EQ(st.outages_without_rate, 0);
  EXPECT_EQ(st.reconnects, 1);
  ASSERT_FALSE(w.log.empty());
  EXPECT_TRUE(has(w.log.back(), "about 20 frames lost")) << w.log.back();
}

// A camera that comes up late: the first open is retried as a reopen is; no reconnect counted.
TEST(Reconnect, AFirstOpenThatFailsIsRetried) {
  World w;
  w.script = {{0, {}, true}, {0, {}, true}, {2, Connection::kEnd}};
  auto src = reconnecting_source(kUri, opener(&w), policy(3, 0.25, 8), nullptr, w.hooks());
  EXPECT_EQ(w.opened, 1u);  // tried once when made
  EXPECT_TRUE(reconnect_stats(*src)->away);
  const Read r = read_all(*src);
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.index, (std::vector<std::int64_t>{0, 1}));
  EXPECT_EQ(w.waits, (std::vector<double>{0.25, 0.5}));
  const ReconnectStats st = *reconnect_stats(*src);
  EXPECT_EQ(st.reconnects, 0);
  EXPECT_EQ(st.tries, 2);
  EXPECT_EQ(st.seconds_away, 0);  // no stream yet: nothing was lost
  ASSERT_FALSE(w.log.empty());
  EXPECT_TRUE(has(w.log.back(), "opened after")) << w.log.back();

  // Never there: gives up with the open's error.
  World never;
  auto gone = reconnecting_source(kUri, opener(&never), policy(2, 0.25, 8), nullptr, never.hooks());
  const Read g = read_all(*gone);
  EXPECT_TRUE(g.index.empty());
  EXPECT_TRUE(has(g.error, "gave up after 2 failed tries in a row to open it")) << g.error;
  EXPECT_TRUE(reconnect_stats(*gone)->gave_up);
}

// Errors that are not input errors (a broken build, a bug) are not retried.
TEST(Reconnect, OtherErrorsEndAtOnce) {
  World w;
  SourceOpener broken = []() -> std::unique_ptr<Source> { throw Error("GStreamer cannot start"); };
  EXPECT_THROW(reconnecting_source(kUri, broken, policy(3, 1, 8), nullptr, w.hooks()), Error);
  SourceOpener first = opener(&w);
  w.script = {{1, Connection::kStall}};
  int opens = 0;
  auto src = reconnecting_source(
      kUri,
      [&]() -> std::unique_ptr<Source> {
        if (opens++ == 0) return first();
        throw Error("GStreamer cannot start");
      },
      policy(3, 1, 8), nullptr, w.hooks());
  Frame f;
  EXPECT_TRUE(src->next(&f));
  try {
    src->next(&f);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kRuntime) << e.what();
  }
  EXPECT_EQ(opens, 2);
}

// A stop request ends a long wait at once (the real wait, looking at the flag every 50 ms).
TEST(Reconnect, AStopEndsTheWait) {
  World w;
  w.script = {{1, Connection::kError}};
  std::atomic<int> stop{0};
  SourceOptions o = policy(3, 60, 60);
  o.stop = &stop;
  ReconnectHooks h = w.hooks();
  h.wait = nullptr;  // the real one
  h.now = nullptr;
  auto src = reconnecting_source(kUri, opener(&w), o, nullptr, h);
  Frame f;
  ASSERT_TRUE(src->next(&f));
  std::thread t([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    stop.store(SIGINT);
  });
  const auto t0 = std::chrono::steady_clock::now();
  bool more = true;
  EXPECT_NO_THROW(more = src->next(&f));
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  t.join();
  EXPECT_FALSE(more);
  EXPECT_LT(waited, 30.0) << "waited for the 60 s delay, not for the stop";
  std::printf("a stop 100 ms into a 60 s wait ended it after %.0f ms\n", waited * 1000);
  EXPECT_EQ(w.opened, 1u);  // no reopen after the stop
  const ReconnectStats st = *reconnect_stats(*src);
  EXPECT_FALSE(st.away);
  EXPECT_FALSE(st.gave_up);
  EXPECT_EQ(st.tries, 0);
  EXPECT_GT(st.seconds_away, 0);
}

// Which sources open_source() wraps: live ones only, and none with attempts 0.
TEST(Reconnect, OnlyLiveSourcesAreWrapped) {
  test::TempDir dir;
  EXPECT_FALSE(reconnect_stats(*open_source("test://blobs?frames=2")));
  {
    std::ofstream(dir / "a.pgm") << "P5\n2 2\n255\n" << std::string(4, '\x10');
    EXPECT_FALSE(reconnect_stats(*open_source("frames://" + dir.str())));
  }
  {
    std::ofstream(dir / "c.y4m") << "YUV4MPEG2 W2 H2 F25:1 Cmono\nFRAME\n" << std::string(4, 'x');
    EXPECT_FALSE(reconnect_stats(*open_source("file://" + dir / "c.y4m")));
  }
  if (!have_gstreamer() || !detect_gst_features().has("videotestsrc")) {
    GTEST_SKIP() << "no GStreamer videotestsrc: the live sources are not checked";
  }
  EXPECT_FALSE(reconnect_stats(*open_source("test://smpte?w=32&h=24&frames=2")));
  EXPECT_FALSE(reconnect_stats(
      *open_source("gst://videotestsrc num-buffers=2 ! video/x-raw,width=32,height=24 ! "
                   "videoconvert ! appsink")));
  auto live = open_source("test://smpte?w=32&h=24&frames=3&live=true");
  ASSERT_TRUE(reconnect_stats(*live));
  EXPECT_TRUE(live->live());
  EXPECT_TRUE(has(live->describe(), "reconnect: 10 tries")) << live->describe();
  ASSERT_TRUE(gst_source_stats(*live));  // the GStreamer source's counters, through the wrapper
  const Read r = read_all(*live);        // the end of the stream ends it: no reopen
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.index.size(), 3u);
  EXPECT_EQ(reconnect_stats(*live)->tries, 0);
  EXPECT_EQ(gst_source_stats(*live)->delivered, 3);
  EXPECT_TRUE(reconnect_stats(*open_source(
      "gst://videotestsrc is-live=true num-buffers=2 ! video/x-raw,width=32,height=24 ! "
      "videoconvert ! appsink")));
  SourceOptions never;
  never.reconnect.attempts = 0;
  EXPECT_FALSE(reconnect_stats(*open_source("test://smpte?w=32&h=24&frames=3&live=true", never)));
}

// An RTP sender on 127.0.0.1 that stops mid-run and starts again: the receiver stalls (0.5 s
// without a frame), reopens, and frames come again with indices that keep counting.
TEST(Reconnect, RtpSenderStopsAndStartsAgain) {
  if (!have_gstreamer()) GTEST_SKIP() << "built without GStreamer";
  const GstFeatures f = detect_gst_features();
  for (const char* e : {"udpsrc", "udpsink", "rtph264pay", "rtph264depay", "h264parse",
                        "rtpjitterbuffer", "appsrc", "videoconvert"}) {
    if (!f.has(e)) GTEST_SKIP() << "GStreamer element " << e << " missing";
  }
  if (h264_encoder_chain(f, 30, 1000, true).empty()) {
    GTEST_SKIP() << "no H.264 encoder (gstreamer1.0-plugins-ugly for x264enc)";
  }
  if (!f.has("avdec_h264") && !f.has("openh264dec") && !f.has("nvv4l2decoder")) {
    GTEST_SKIP() << "no H.264 decoder (gstreamer1.0-libav)";
  }
  const int port = test::free_udp_port();
  ASSERT_GT(port, 0);
  const std::string where = "127.0.0.1:" + std::to_string(port);
  std::vector<std::string> log;
  std::mutex log_m;
  SourceOptions o = policy(40, 0.05, 0.2);
  o.timeout_s = 0.5;
  const std::string uri = "rtp://" + where;
  const SourceSpec spec = parse_gst_source_uri(uri, o.colour);
  ReconnectHooks h;
  h.log = [&](const std::string& line) {
    std::lock_guard<std::mutex> lk(log_m);
    log.push_back(line);
  };
  auto rx = reconnecting_source(
      uri, [&] { return open_gst_source(spec, o); }, o, nullptr, h);

  // The sender: a frame every 20 ms until told to pause; once the receiver has noticed the
  // silence, a new encoder and stream (as a restarted camera's) until told to stop.
  std::atomic<bool> pause{false}, done{false};
  std::atomic<int> sent{0};
  std::string sender_error;
  const auto t0 = std::chrono::steady_clock::now();
  auto in_time = [&] { return std::chrono::steady_clock::now() - t0 < std::chrono::seconds(40); };
  std::thread tx([&] {
    try {
      auto pattern = open_source("test://blobs?w=64&h=48&frames=1000000");
      Frame pf;
      for (int run = 0; run < 2; ++run) {
        VideoSinkOptions vo;
        vo.fps = 25;  // a key frame each 25 frames: every 0.5 s
        VideoSink sink("rtp://" + where, vo);
        while (!(run == 0 ? pause : done).load() && in_time()) {
          pattern->next(&pf);
          sink.write(pf.image.view());
          ++sent;
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        sink.close();
        while (run == 0 && !reconnect_stats(*rx)->away && in_time()) {
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
      }
    } catch (const std::exception& e) {
      sender_error = e.what();
    }
  });

  std::vector<std::int64_t> before, after;
  std::string error;
  try {
    Frame fr;
    while (after.size() < 10 && in_time() && rx->next(&fr)) {
      EXPECT_EQ(fr.image.width(), 64);
      (reconnect_stats(*rx)->reconnects > 0 ? after : before).push_back(fr.index);
      if (before.size() >= 10) pause = true;
    }
  } catch (const Error& e) {
    error = e.what();
  }
  done = true;
  tx.join();
  EXPECT_EQ(sender_error, "");
  EXPECT_EQ(error, "");
  const ReconnectStats st = *reconnect_stats(*rx);
  EXPECT_GE(st.reconnects, 1);
  EXPECT_GE(before.size(), 10u);
  EXPECT_GE(after.size(), 10u) << "sent " << sent.load() << "; " << ::testing::PrintToString(log);
  std::vector<std::int64_t> all = before;
  all.insert(all.end(), after.begin(), after.end());
  for (std::size_t i = 1; i < all.size(); ++i) ASSERT_LT(all[i - 1], all[i]) << "frame " << i;
  EXPECT_GT(st.seconds_away, 0.4);  // at least the stall limit
  EXPECT_GE(st.frames_lost + st.outages_without_rate, 1);
  std::lock_guard<std::mutex> lk(log_m);
  bool named = !log.empty();
  for (const std::string& line : log) named = named && has(line, "source '" + uri + "': ");
  EXPECT_TRUE(named) << ::testing::PrintToString(log);
  std::printf(
      "rtp reconnect: %zu frames before, %zu after, %lld reconnects, %lld tries, %.2f s "
      "away, %lld frames lost (estimate), %lld outages without a rate\n",
      before.size(), after.size(), static_cast<long long>(st.reconnects),
      static_cast<long long>(st.tries), st.seconds_away, static_cast<long long>(st.frames_lost),
      static_cast<long long>(st.outages_without_rate));
}

// summary.json: a live input that never comes (a camera that is not there) gives up after the
// config's tries, ends the run with its error and says so in `reconnects`; a file input has none.
TEST(Reconnect, SummarySaysWhatReconnectingDid) {
  test::TempDir dir;
  auto run = [&](const std::string& name, const std::string& yaml, RunSummary* s) {
    std::ofstream(dir / (name + ".yaml"))
        << yaml << "platform: cpu\nstages: [{type: to_gray}, {type: stats}]\n";
    RunOptions o;
    o.config = dir / (name + ".yaml");
    o.output_dir = dir / name;
    *s = run_pipeline(o);
    return nlohmann::json::parse(test::slurp(fs::path(dir / name) / "summary.json"));
  };
  RunSummary s;
  const nlohmann::json file = run("file", "input: test://blobs?w=32&h=24&frames=2\n", &s);
  EXPECT_FALSE(file.contains("reconnects")) << file.dump();
  if (!have_gstreamer() || !detect_gst_features().has("v4l2src")) {
    GTEST_SKIP() << "no GStreamer v4l2src";
  }
  const nlohmann::json cam = run("cam",
                                 "input: v4l2:///dev/jetpipe-no-such-camera\n"
                                 "reconnect: {attempts: 2, delay_ms: 10, max_delay_ms: 15}\n",
                                 &s);
  EXPECT_EQ(s.read, 0);
  EXPECT_TRUE(has(s.source_error, "gave up after 2 failed tries in a row to open it"))
      << s.source_error;
  EXPECT_TRUE(has(s.source_error, "v4l2:///dev/jetpipe-no-such-camera")) << s.source_error;
  EXPECT_EQ(cam["source_error"], s.source_error);
  ASSERT_TRUE(cam.contains("reconnects")) << cam.dump();
  const nlohmann::json& r = cam["reconnects"];
  EXPECT_EQ(r["count"], 0);
  EXPECT_EQ(r["tries"], 2);
  EXPECT_EQ(r["gave_up"], true);
  EXPECT_TRUE(has(r["last_error"].get<std::string>(), "cannot open")) << r.dump();
  EXPECT_EQ(r["policy"]["attempts"], 2);
  EXPECT_EQ(r["policy"]["delay_ms"], 10);
  EXPECT_EQ(r["policy"]["max_delay_ms"], 15);
  EXPECT_EQ(test::slurp(fs::path(dir / "cam") / "results.jsonl"), "");
}

}  // namespace
}  // namespace jetpipe
