// trimctl fleet: who holds and who waits for the shared backends' slots,
// as GetFleet reports them, in a table or JSON.
#include "trimctl_fixture.hpp"

namespace trimctl_test {
namespace {

class TrimctlFleet : public TrimctlTest {
 protected:
  // pool-a with two slots, both held, and one filesystem of this host waiting.
  void serve_pool_a() {
    fake_->set_fleet({{"pool-a", 2, 1, "web3", "/srv", true, false, ""},
                      {"pool-a", 2, 2, "db1", "/var", true, false, ""},
                      {"pool-a", 2, 3, "here", "/mnt/fast", false, true, ""}});
  }
};

TEST_F(TrimctlFleet, ListsHoldersThenWaitersInArrivalOrderWithASummary) {
  serve_pool_a();
  const auto result = trimctl({"fleet"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto lines = lines_of(result.out);
  ASSERT_EQ(lines.size(), 5u) << result.out;
  EXPECT_EQ(lines[0].rfind("BACKEND", 0), 0u) << lines[0];
  EXPECT_NE(lines[1].find("holds"), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find("web3"), std::string::npos) << lines[1];
  EXPECT_NE(lines[3].find("waits"), std::string::npos) << lines[3];
  EXPECT_NE(lines[3].find("/mnt/fast (this trimd)"), std::string::npos) << lines[3];
  EXPECT_EQ(lines[4], "pool-a: 2/2 slots held, 1 waiting");
}

TEST_F(TrimctlFleet, JsonCarriesEveryFieldOfEveryClaim) {
  serve_pool_a();
  const auto result = trimctl({"fleet", "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(python_json(result.out,
                        "[(c['position'], c['holds_slot'], c['this_trimd']) "
                        "for c in doc['claims']]"),
            "[(1, True, False), (2, True, False), (3, False, True)]");
  EXPECT_EQ(python_json(result.out, "sorted(doc['claims'][0].keys())"),
            "['backend', 'counts', 'holds_slot', 'host', 'max_concurrent', 'mount_point', 'note', "
            "'position', 'this_trimd']");
  EXPECT_EQ(python_json(result.out, "[(b['backend'], b['claims']) for b in doc['backends']]"),
            "[('pool-a', 3)]");
}

// A peer's lease-less key, and a backend with more claims than a page.
TEST_F(TrimctlFleet, MarksKeysThatDoNotCountAndSaysWhatThePageLeavesOut) {
  trimctl::FleetView view;
  view.backends.push_back({"pool-a", 4, 1000, 2, 50000, 935, false, ""});
  view.claims = {{"pool-a", 4, 0, "squatter", "/x", false, false, "no lease"},
                 {"pool-a", 4, 1, "web3", "/srv", true, false, ""},
                 {"pool-a", 4, 2, "odd", "?", true, false, "a value that is not a trimd claim"}};
  fake_->set_fleet(view);
  const auto result = trimctl({"fleet"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto lines = lines_of(result.out);
  ASSERT_EQ(lines.size(), 5u) << result.out;
  EXPECT_NE(lines[1].find("ignored"), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find("(no lease)"), std::string::npos) << lines[1];
  EXPECT_NE(lines[3].find("(a value that is not a trimd claim)"), std::string::npos) << lines[3];
  EXPECT_EQ(lines[4],
            "pool-a: 4/4 slots held, 996 waiting (935 not listed); 2 key(s) ignored (they do not "
            "count); 50000 more key(s) past the read's bound");
}

TEST_F(TrimctlFleet, WithoutAFleetSectionFailsWithExitOneAndSaysWhy) {
  const auto result = trimctl({"fleet"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("no [fleet]"), std::string::npos) << result.err;
}

}  // namespace
}  // namespace trimctl_test
