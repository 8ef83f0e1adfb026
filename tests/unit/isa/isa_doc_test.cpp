// docs/isa.md is generated from the instruction table; this fails when the table changed and
// the document was not regenerated (see scripts/gen_isa_doc.cpp for the command).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#define PADLOCK_ISA_DOC_NO_MAIN
#include "scripts/gen_isa_doc.cpp"

namespace padlock::isa {
namespace {

TEST(IsaDoc, CommittedFileIsCurrent) {
  std::ifstream in(std::string(PADLOCK_VECTOR_DIR) + "/../../docs/isa.md");
  ASSERT_TRUE(in) << "docs/isa.md missing";
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), doc::markdown()) << "regenerate docs/isa.md with scripts/gen_isa_doc.cpp";
}

TEST(IsaDoc, EveryRowListed) {
  const std::string md = doc::markdown();
  for (const InsnInfo& row : kInstructions) {
    EXPECT_NE(md.find(std::string("| ") + row.guide_name + " | `" + row.mnemonic + "` | `" +
                      doc::bytes_of(row) + "`"),
              std::string::npos)
        << row.guide_name;
  }
}

}  // namespace
}  // namespace padlock::isa
