cat > /tmp/run.sh <<'EOF'
#!/bin/sh
rm -rf "$1"
EOF
chmod +x /tmp/run.sh && /tmp/run.sh build
